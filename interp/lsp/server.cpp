// The server's loop and its messages (server.h).
#include "interp/lsp/server.h"

#include <csignal>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <stdexcept>

#include "diag/render_lsp.h"
#include "interp/check/import_set.h"
#include "interp/check/program_options.h"
#include "interp/lsp/disk_files.h"
#include "interp/lsp/documents.h"
#include "interp/lsp/features.h"
#include "interp/lsp/formatting.h"
#include "interp/lsp/framing.h"
#include "interp/lsp/pending.h"

namespace ss::lsp {

namespace {

using nlohmann::json;

// JSON-RPC's and LSP's error codes.
constexpr int kParseError = -32700, kInvalidRequest = -32600,
              kMethodNotFound = -32601, kInvalidParams = -32602,
              kInternalError = -32603, kServerNotInitialized = -32002,
              kRequestFailed = -32803;

// A request's params that do not have the shape its method needs.
struct BadParams : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const json& field(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key))
    throw BadParams(std::string("missing \"") + key + "\"");
  return j.at(key);
}
std::string string_field(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_string())
    throw BadParams(std::string("\"") + key + "\" is not a string");
  return v.get<std::string>();
}
uint32_t uint_field(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_number_integer() || v.get<long long>() < 0 ||
      v.get<long long>() > UINT32_MAX)
    throw BadParams(std::string("\"") + key +
                    "\" is not a non-negative integer");
  return static_cast<uint32_t>(v.get<long long>());
}

class Server {
 public:
  Server(int out_fd, std::ostream& log, check::Options opts)
      : out_(out_fd), log_(log), opts_(std::move(opts)) {}

  /// Handles one frame's body; false once `exit` came or the client is
  /// gone (its end of the output closed).
  bool on_frame(const std::string& body) { return handle(body) && !gone_; }
  int exit_code() const { return shutdown_ ? 0 : 1; }
  /// Whether a document waits for its check (Note [Checks when the input
  /// is quiet] in pending.h).
  bool has_pending() const { return !pending_.empty(); }
  /// Checks the oldest pending document.
  void check_next();

 private:
  void send(const json& j) {
    // Note [Bytes that are not UTF-8] (diag/render_json.cpp): a message
    // quoting the source prints U+FFFD rather than throwing.
    if (!write_frame(out_,
                     j.dump(-1, ' ', false, json::error_handler_t::replace)))
      gone_ = true;
  }
  void reply(const json& id, json result) {
    send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
  }
  void reply_error(const json& id, int code, const std::string& message) {
    send({{"jsonrpc", "2.0"},
          {"id", id},
          {"error", {{"code", code}, {"message", message}}}});
  }
  void notify(const std::string& method, json params) {
    send({{"jsonrpc", "2.0"}, {"method", method}, {"params", params}});
  }

  bool handle(const std::string& body);
  /// A request's result (null included); throws BadParams.
  json request(const std::string& method, const json& params, bool& known);
  /// A notification; false for `exit`.
  bool notification(const std::string& method, const json& params);

  json initialize(const json& params);
  /// The options a check of [d] runs with: imports open in the editor
  /// read from their text (Note [Open imports]); what the check reads is
  /// noted in [inputs] when given.
  check::Options import_options(
      const Document& d, std::map<std::string, ContentHash>* inputs = nullptr);
  void check(Document& d);
  /// Makes pending the documents whose last check read the file at
  /// canonical [path] with other content than [now] (Note [Open imports]).
  void imported_changed(const std::string& path, ContentHash now);
  void publish(Document& d);
  void unpublish(const std::string& uri);
  Document& document(const json& params);
  uint32_t offset(const Document& d, const json& params);
  /// The byte offsets of params.range's start and end in [d].
  std::pair<uint32_t, uint32_t> range_offsets(const Document& d,
                                              const json& params);

  int out_;
  uint64_t tokens_serial_ = 0;  // the resultIds of semantic tokens
  std::ostream& log_;
  check::Options opts_;
  bool initialized_ = false;
  bool shutdown_ = false;
  bool gone_ = false;  // a write failed: nobody reads the answers
  DocumentStore docs_;
  DiskFiles disk_;
  std::shared_ptr<check::ImportSets> import_sets_ =
      std::make_shared<check::ImportSets>();
  PendingChecks pending_;
  ImportGraph imports_;
  /// Per document, the other files (imports) it published diagnostics to.
  std::map<std::string, std::set<std::string>> published_;
};

namespace {

/// The deepest nesting a message may have: LSP's messages nest a few
/// levels (a workspace edit six); the safetensors reader holds its headers
/// to 64 (kMaxHeaderDepth) the same way.
constexpr int kMaxJsonDepth = 64;

/// Whether [body] nests arrays and objects deeper than kMaxJsonDepth,
/// scanned without building anything (issue 32 item 10: params nested 20
/// MB deep took 1.9 GB to parse). Brackets inside strings do not count.
bool nests_too_deep(const std::string& body) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : body) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

}  // namespace

bool Server::handle(const std::string& body) {
  if (nests_too_deep(body)) {
    reply_error(nullptr,
                kParseError,
                "the message nests deeper than " +
                    std::to_string(kMaxJsonDepth) + " levels");
    return true;
  }
  json msg = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (msg.is_discarded()) {
    reply_error(nullptr, kParseError, "the message is not JSON");
    return true;
  }
  if (!msg.is_object()) {
    reply_error(nullptr, kInvalidRequest, "a message is a JSON object");
    return true;
  }
  bool has_id = msg.contains("id");
  json id = has_id ? msg["id"] : json();
  if (has_id && !id.is_string() && !id.is_number_integer()) {
    reply_error(nullptr, kInvalidRequest, "an id is a number or a string");
    return true;
  }
  if (!msg.contains("method")) {
    // A response to a request of ours: this server sends none.
    if (!has_id) reply_error(nullptr, kInvalidRequest, "no \"method\"");
    return true;
  }
  if (!msg["method"].is_string()) {
    reply_error(id, kInvalidRequest, "\"method\" is not a string");
    return true;
  }
  std::string method = msg["method"].get<std::string>();
  json params = msg.contains("params") ? msg["params"] : json::object();
  try {
    if (!has_id) return notification(method, params);
    if (!initialized_ && method != "initialize") {
      reply_error(id, kServerNotInitialized, "initialize first");
      return true;
    }
    if (shutdown_) {
      reply_error(id, kInvalidRequest, "the server is shutting down");
      return true;
    }
    bool known = true;
    json result = request(method, params, known);
    if (known)
      reply(id, std::move(result));
    else
      reply_error(id, kMethodNotFound, "unknown method " + method);
  } catch (const RequestFailed& e) {
    if (has_id) reply_error(id, kRequestFailed, e.what());
  } catch (const BadParams& e) {
    if (has_id) reply_error(id, kInvalidParams, e.what());
    log_ << "ss lsp: " << method << ": " << e.what() << "\n";
  } catch (const std::exception& e) {
    // A bug of the server; the session goes on.
    if (has_id) reply_error(id, kInternalError, e.what());
    log_ << "ss lsp: " << method << ": internal error: " << e.what() << "\n";
  }
  return true;
}

json Server::request(const std::string& method,
                     const json& params,
                     bool& known) {
  if (method == "initialize") {
    if (initialized_) throw BadParams("initialize came twice");
    return initialize(params);
  }
  if (method == "shutdown") {
    // Note [Checks when the input is quiet]: what was said is checked
    // before the session ends.
    while (has_pending()) check_next();
    shutdown_ = true;
    return nullptr;
  }
  if (method == "textDocument/hover") {
    Document& d = document(params);
    return hover(*d.now, offset(d, params));
  }
  if (method == "textDocument/definition") {
    Document& d = document(params);
    return definition(*d.now, offset(d, params), d.uri);
  }
  if (method == "textDocument/references") {
    Document& d = document(params);
    const json& ctx = params.contains("context") ? params["context"] : json();
    const bool decl = ctx.is_object() && ctx.contains("includeDeclaration") &&
                      ctx["includeDeclaration"].is_boolean() &&
                      ctx["includeDeclaration"].get<bool>();
    return references(*d.now, offset(d, params), d.uri, decl);
  }
  if (method == "textDocument/prepareRename") {
    Document& d = document(params);
    return prepare_rename(*d.now, offset(d, params));
  }
  if (method == "textDocument/rename") {
    Document& d = document(params);
    return rename(*d.now,
                  offset(d, params),
                  d.uri,
                  string_field(params, "newName"),
                  import_options(d));
  }
  if (method == "textDocument/codeAction") {
    Document& d = document(params);
    auto [from, to] = range_offsets(d, params);
    return code_actions(*d.now, d.uri, from, to);
  }
  if (method == "textDocument/inlayHint") {
    Document& d = document(params);
    auto [from, to] = range_offsets(d, params);
    return inlay_hints(*d.now, from, to);
  }
  if (method == "textDocument/semanticTokens/full" ||
      method == "textDocument/semanticTokens/full/delta") {
    Document& d = document(params);
    std::vector<uint32_t> now = semantic_tokens(*d.now);
    const std::string id = std::to_string(++tokens_serial_);
    json out{{"resultId", id}};
    if (method == "textDocument/semanticTokens/full/delta" &&
        params.contains("previousResultId") &&
        params["previousResultId"] == d.tokens_id)
      out["edits"] = semantic_tokens_delta(d.tokens_sent, now);
    else
      out["data"] = now;
    d.tokens_sent = std::move(now);
    d.tokens_id = id;
    return out;
  }
  if (method == "textDocument/documentSymbol") {
    return document_symbols(*document(params).now);
  }
  if (method == "workspace/symbol") {
    while (has_pending()) check_next();
    std::vector<std::pair<std::string, const Analysis*>> all;
    for (const auto& [uri, doc] : docs_.all())
      all.emplace_back(uri, doc.now ? doc.now.get() : nullptr);
    return workspace_symbols(all,
                             params.is_object() && params.contains("query")
                                 ? string_field(params, "query")
                                 : "");
  }
  if (method == "textDocument/signatureHelp") {
    Document& d = document(params);
    const Analysis* a = d.now->prog ? d.now.get() : d.last_program.get();
    const json& p = field(params, "position");
    return signature_help(
        a,
        d.text,
        offset_of(d.text, uint_field(p, "line"), uint_field(p, "character")));
  }
  if (method == "textDocument/formatting") {
    return formatting(document(params).text);
  }
  if (method == "textDocument/rangeFormatting") {
    const json& r = field(params, "range");
    return formatting(document(params).text,
                      std::make_pair(uint_field(field(r, "start"), "line"),
                                     uint_field(field(r, "end"), "line")));
  }
  if (method == "textDocument/completion") {
    Document& d = document(params);
    const Analysis* a = d.now->prog ? d.now.get() : d.last_program.get();
    uint32_t at = offset_of(d.text,
                            uint_field(field(params, "position"), "line"),
                            uint_field(field(params, "position"), "character"));
    return completion(a, d.text, at);
  }
  known = false;
  return nullptr;
}

bool Server::notification(const std::string& method, const json& params) {
  if (method == "exit") return false;
  // Before initialize and after shutdown, notifications are dropped (the
  // LSP spec), as is `$/` (cancelRequest, setTrace) and what is unknown.
  if (!initialized_ || shutdown_) return true;
  if (method == "textDocument/didOpen") {
    const json& td = field(params, "textDocument");
    const json& v = td.contains("version") ? td["version"] : json(0);
    Document& d = docs_.open(string_field(td, "uri"),
                             string_field(td, "text"),
                             v.is_number_integer() ? v.get<long long>() : 0);
    pending_.add(d.uri);
    imported_changed(d.canonical, content_hash(d.text));
  } else if (method == "textDocument/didChange") {
    const json& td = field(params, "textDocument");
    Document* d = docs_.find(string_field(td, "uri"));
    if (!d) throw BadParams("didChange of a document that is not open");
    const json& changes = field(params, "contentChanges");
    if (!changes.is_array()) throw BadParams("contentChanges is not a list");
    for (const json& c : changes) {
      std::string text = string_field(c, "text");
      if (!c.contains("range")) {
        d->text = std::move(text);
        continue;
      }
      const json& r = field(c, "range");
      const json& s = field(r, "start");
      const json& e = field(r, "end");
      apply_edit(d->text,
                 uint_field(s, "line"),
                 uint_field(s, "character"),
                 uint_field(e, "line"),
                 uint_field(e, "character"),
                 text);
    }
    if (td.contains("version") && td["version"].is_number_integer())
      d->version = td["version"].get<long long>();
    pending_.add(d->uri);
    imported_changed(d->canonical, content_hash(d->text));
  } else if (method == "textDocument/didSave") {
    // A file that is not open may import the saved one from the disk.
    if (Document* d =
            docs_.find(string_field(field(params, "textDocument"), "uri")))
      imported_changed(d->canonical, content_hash(d->text));
  } else if (method == "textDocument/didClose") {
    std::string uri = string_field(field(params, "textDocument"), "uri");
    if (docs_.find(uri)) {
      unpublish(uri);
      for (const std::string& other : published_[uri]) unpublish(other);
      published_.erase(uri);
      std::string path = docs_.find(uri)->canonical;
      docs_.close(uri);
      pending_.remove(uri);
      imports_.forget(uri);
      // They read the disk again.
      imported_changed(path, content_hash(disk_.read(path)));
    }
  }
  return true;
}

json Server::initialize(const json& params) {
  if (params.is_object() && params.contains("initializationOptions")) {
    const json& o = params["initializationOptions"];
    if (o.is_object() && o.contains("devices")) {
      std::string spec = string_field(o, "devices");
      if (!check::valid_device_spec(spec))
        throw BadParams("initializationOptions.devices: not a device list: " +
                        spec);
      opts_.devices_override = spec;
    }
  }
  initialized_ = true;
  json caps{
      {"positionEncoding", "utf-16"},
      // 2: incremental changes (a full text is taken as well).
      {"textDocumentSync",
       {{"openClose", true},
        {"change", 2},
        {"save", {{"includeText", false}}}}},
      {"hoverProvider", true},
      {"definitionProvider", true},
      {"documentFormattingProvider", true},
      {"documentSymbolProvider", true},
      {"inlayHintProvider", true},
      {"semanticTokensProvider",
       {{"legend", semantic_tokens_legend()}, {"full", {{"delta", true}}}}},
      {"codeActionProvider", {{"codeActionKinds", {"quickfix"}}}},
      {"referencesProvider", true},
      {"renameProvider", {{"prepareProvider", true}}},
      {"workspaceSymbolProvider", true},
      {"signatureHelpProvider", {{"triggerCharacters", {"(", ","}}}},
      {"documentRangeFormattingProvider", true},
      {"completionProvider", {{"triggerCharacters", {"."}}}}};
  return {{"capabilities", caps},
          {"serverInfo", {{"name", "ss"}, {"version", "0.1.0"}}}};
}

Document& Server::document(const json& params) {
  Document* d = docs_.find(string_field(field(params, "textDocument"), "uri"));
  if (!d) throw BadParams("the document is not open");
  // Note [Checks when the input is quiet]: the answer is about the last
  // change.
  if (pending_.remove(d->uri)) check(*d);
  return *d;
}

std::pair<uint32_t, uint32_t> Server::range_offsets(const Document& d,
                                                    const json& params) {
  const json& r = field(params, "range");
  const json& a = field(r, "start");
  const json& b = field(r, "end");
  return {d.now->offset(uint_field(a, "line"), uint_field(a, "character")),
          d.now->offset(uint_field(b, "line"), uint_field(b, "character"))};
}

uint32_t Server::offset(const Document& d, const json& params) {
  const json& p = field(params, "position");
  return d.now->offset(uint_field(p, "line"), uint_field(p, "character"));
}

check::Options Server::import_options(
    const Document& d, std::map<std::string, ContentHash>* inputs) {
  // An import the editor has open is read from its text, saved or not;
  // the others are read here rather than by the checker, to note what
  // was read (and to read a file again only when it changed: Note [Disk
  // files read again when changed] in disk_files.h). Note [Shared import
  // sets] (interp/check/import_set.h): the imports' trees are those of an
  // earlier check when the files read the same.
  check::Options o = opts_;
  o.import_sets = import_sets_;
  o.import_text = [this, &d, inputs](
                      const std::string& path) -> std::optional<std::string> {
    const Document* open = docs_.find_path(path);
    std::optional<std::string> text =
        open && open != &d ? std::optional(open->text) : disk_.read(path);
    if (inputs) (*inputs)[path] = content_hash(text);
    return text;
  };
  return o;
}

void Server::check(Document& d) {
  std::map<std::string, ContentHash> inputs;
  d.now = analyze(d.path, d.text, import_options(d, &inputs));
  imports_.record(d.uri, inputs);
  if (d.now->prog) d.last_program = d.now;
  publish(d);
}

void Server::check_next() {
  std::optional<std::string> uri = pending_.pop();
  if (Document* d = uri ? docs_.find(*uri) : nullptr) check(*d);
}

// Note [Open imports]: an import that the editor has open is read from its
// text (Options::import_text), so a change there shows in the files that
// import it at once, as it shows in itself: after each change of a
// document, the other open documents whose last check read its file (the
// ImportGraph of pending.h, transitively) are checked again, unless they
// read the same content. The disk is read for the rest, as `ss check`
// does.
void Server::imported_changed(const std::string& path, ContentHash now) {
  for (const std::string& uri : imports_.stale_importers(path, now))
    pending_.add(uri);
}

void Server::publish(Document& d) {
  const Analysis& a = *d.now;
  auto by_file = diag::render_lsp(
      a.diags, a.sm, a.file, [&](uint32_t f) { return a.uri_of(f, d.uri); });
  std::set<std::string> others;
  for (auto& [file, list] : by_file) {
    std::string uri = a.uri_of(file, d.uri);
    json params{{"uri", uri}, {"diagnostics", std::move(list)}};
    if (file == a.file) {
      params["version"] = d.version;
    } else {
      if (docs_.find(uri)) continue;  // open: its own check speaks for it
      others.insert(uri);
    }
    notify("textDocument/publishDiagnostics", std::move(params));
  }
  // An import fixed since the last check: clear what was said about it.
  for (const std::string& uri : published_[d.uri])
    if (!others.count(uri) && !docs_.find(uri)) unpublish(uri);
  published_[d.uri] = std::move(others);
}

void Server::unpublish(const std::string& uri) {
  notify("textDocument/publishDiagnostics",
         {{"uri", uri}, {"diagnostics", json::array()}});
}

}  // namespace

int serve(int in_fd, int out_fd, std::ostream& log, check::Options opts) {
  // A client that closes its end makes write(2) fail with EPIPE, which
  // ends the loop, rather than a SIGPIPE that kills the server unsaid.
  ::signal(SIGPIPE, SIG_IGN);
  Server server(out_fd, log, std::move(opts));
  FrameReader reader(in_fd);
  std::string body;
  for (;;) {
    switch (reader.next(body)) {
      case FrameReader::Status::End:
        return server.exit_code();
      case FrameReader::Status::BadHeader:
        log << "ss lsp: " << body << "\n";
        break;
      case FrameReader::Status::Message:
        if (!server.on_frame(body)) return server.exit_code();
        break;
    }
    // Note [Checks when the input is quiet] (pending.h): the input stays
    // quiet kQuietMs before the first check, then is looked at between
    // two checks without waiting.
    for (int wait = kQuietMs;
         server.has_pending() && !reader.input_waiting(wait);
         wait = 0)
      server.check_next();
  }
}

}  // namespace ss::lsp
