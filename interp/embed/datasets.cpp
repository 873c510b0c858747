// Datasets a host makes from its own tensors (embed.h, tensor_dataset).
#include "interp/data/batches.h"
#include "interp/data/dataset.h"
#include "interp/embed/held.h"
#include "interp/embed/session_impl.h"
#include "interp/eval/extern_host.h"

namespace ss::embed {

namespace {

const types::RecordInfo& record_named(const check::Program& p,
                                      const std::string& record) {
  const types::RecordInfo* info = p.record(record);
  if (!info)
    throw Error("TypeError", "the program has no data record `" + record + "`");
  return *info;
}

// A Dataset[R] value over [s], with its type.
Value dataset_value(std::shared_ptr<data::TensorStore> s) {
  auto h = std::make_shared<Held>();
  h->type.kind = types::Type::Kind::Dataset;
  h->type.record = s->info;
  h->value = eval::Value::object(eval::Value::Kind::Dataset,
                                 data::DatasetValue::of(std::move(s)));
  return Value(std::move(h));
}

}  // namespace

Value Session::tensor_dataset(
    const std::string& record,
    std::vector<std::pair<std::string, ops::Tensor>> fields,
    std::vector<std::pair<std::string, std::vector<ops::Tensor>>> per_item) {
  Impl& I = *impl_;
  return I.on_deep([&] {
    const types::RecordInfo* info = &record_named(*I.decl_prog, record);
    const std::string source = "TensorDataset(" + record + ")";
    auto s = std::make_shared<data::TensorStore>();
    s->info = info;
    // The item count: every field's, alike.
    std::string counted;
    auto count = [&](const std::string& field, int64_t n) {
      if (counted.empty()) {
        s->n = n;
        counted = field;
      } else if (n != s->n) {
        throw Error("ShapeError",
                    source + ": field `" + field + "` has " +
                        std::to_string(n) + " items, and `" + counted +
                        "` has " + std::to_string(s->n));
      }
    };
    for (auto& [name, t] : fields) {
      if (!info->field(name))
        throw Error("TypeError",
                    "`" + record + "` has no field `" + name + "`");
      if (t.rank() == 0)
        throw Error("ShapeError",
                    source + ": field `" + name +
                        "` is 0-d: give one value per item, [n ...]");
      count(name, t.shape()[0]);
      s->fields[name] = t;
    }
    for (auto& [name, items] : per_item) {
      if (!info->field(name))
        throw Error("TypeError",
                    "`" + record + "` has no field `" + name + "`");
      count(name, static_cast<int64_t>(items.size()));
      s->items[name] = std::move(items);
    }
    try {
      data::check_store(*s, I.decl_prog->dims(), source);
    } catch (const data::DataError& e) {
      Error err(e.kind, e.what());
      err.notes = e.notes;
      throw err;
    }
    return dataset_value(std::move(s));
  });
}

namespace {

// embed's HostDataset behind data's HostSource.
class HostRows : public data::HostSource {
 public:
  HostRows(std::shared_ptr<const HostDataset> src, std::string name)
      : src_(std::move(src)), name_(std::move(name)) {}

  data::Rows load(const std::vector<int64_t>& rows) const override {
    data::Rows out;
    try {
      for (auto& [field, t] : src_->load(rows)) out.fields[field] = t;
    } catch (const HostException& e) {
      // Raised at the loop as the host's own exception (Note [Extern fns
      // of a host language]: the same payload note).
      throw data::DataError(
          "HostError", e.what(), {eval::kHostNote + e.payload});
    }
    return out;
  }
  std::string payload() const override { return src_->payload(); }
  std::string name() const override { return name_; }

 private:
  std::shared_ptr<const HostDataset> src_;
  std::string name_;
};

HostDatasetMaker& maker() {
  static HostDatasetMaker* m = new HostDatasetMaker();
  return *m;
}

std::shared_ptr<const data::HostSource> make_source(const std::string& p) {
  // The record's name is not in the payload: the worker's messages name
  // the dataset by its kind.
  return std::make_shared<HostRows>(maker()(p), "Dataset");
}

}  // namespace

void set_progress_output(std::ostream* err, ProgressDrawing how) {
  data::set_progress_output(err,
                            !err                               ? -1
                            : how == ProgressDrawing::Terminal ? 1
                            : how == ProgressDrawing::Notebook ? 2
                                                               : 0);
}

void set_host_dataset_maker(HostDatasetMaker make) {
  maker() = std::move(make);
  data::set_host_source_maker(&make_source);
}

Value Session::host_dataset(const std::string& record,
                            int64_t n,
                            std::shared_ptr<const HostDataset> src) {
  Impl& I = *impl_;
  return I.on_deep([&] {
    const types::RecordInfo* info = &record_named(*I.decl_prog, record);
    for (const types::FieldInfo& f : info->fields)
      if (f.type.is_tensor() && data::var_axis(f) >= 0)
        throw Error("TypeError",
                    "Dataset(" + record + "): field `" + f.name +
                        "` has a size variable; a dataset written in Python "
                        "takes fixed-shape fields (use TensorDataset with a "
                        "list of arrays per item)");
    if (n < 0) throw Error("ValueError", "a dataset's length is >= 0");
    auto s = std::make_shared<data::TensorStore>();
    s->info = info;
    s->n = n;
    s->host =
        std::make_shared<HostRows>(std::move(src), "Dataset(" + record + ")");
    s->host_dims = I.decl_prog->dims();
    return dataset_value(std::move(s));
  });
}

}  // namespace ss::embed
