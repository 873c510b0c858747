#pragma once
// `ss conformance`'s test of "the same result as one device" (devices.md
// item 1): the numbers main printed, and the final params of the models it
// held, each against the one-device run; and, on several devices, every
// rank's params against rank 0's, bit for bit (item 5: the copies stay
// equal).

#include <map>
#include <string>
#include <vector>

#include "interp/eval/final_params.h"

namespace ss::cli {

/// The numbers in [s], in order.
std::vector<double> numbers_in(const std::string& s);

/// "" when every number [got] printed equals [want]'s within [tol]
/// (relative, against max(|want|, 1)); else what differs, [want] named
/// as [whose] ("on one device": "number 3 is 2.5, on one device 2.4").
std::string compare_outputs(const std::string& want,
                            const std::string& got,
                            double tol,
                            const std::string& whose = "on one device");

/// "" when [got] has [want]'s params, each element within tol x steps of
/// one device's, relative to the largest param element (the f32 error of
/// a sum in another order is relative to the terms summed, and grows with
/// the steps: devices.md item 1).
std::string compare_params(const eval::FinalParams& want,
                           const eval::FinalParams& got,
                           double tol);

/// What a case wrote in its working directory, by path under it: sinks'
/// text files (csv, jsonl) and checkpoints (.safetensors, read as params).
struct CaseFiles {
  std::map<std::string, std::string> text;
  std::map<std::string, eval::FinalParams> tensors;
};

/// Reads every file under [dir].
CaseFiles read_case_files(const std::string& dir);

/// "" when [got] wrote the files [want] wrote and no other, each text
/// file's numbers within [tol] of [want]'s (compare_outputs) and each
/// checkpoint's tensors within tol x [steps] (compare_params).
std::string compare_files(const CaseFiles& want,
                          const CaseFiles& got,
                          double tol,
                          int64_t steps);

/// "" when every rank's params are rank 0's, byte for byte.
std::string compare_ranks(const std::vector<eval::FinalParams>& ranks);

}  // namespace ss::cli
