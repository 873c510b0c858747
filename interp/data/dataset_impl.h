#pragma once
// The item checks and conversions of dataset.cpp shared by dataset_stream.cpp
// and dataset_views.cpp. Not included outside interp/data/.

#include <cstdint>
#include <string>
#include <vector>

#include "interp/data/dataset.h"

namespace ss::data::dataset_detail {

// A host language's dataset's items [rows], checked (dataset_host.cpp).
Rows load_host_rows(const TensorStore& s, const std::vector<int64_t>& rows);

RawType raw_of(types::DType d);
// The file's type name as the user knows it: "f32" for f4, "u8" for u1.
std::string found_dtype(RawType t);
std::string dims_str(const ops::Shape& s);
std::string expected_str(const ops::Shape& fs, const types::FieldInfo& f);
std::string where(int64_t item,
                  const std::string& source,
                  const std::string& field);
std::string num_str(double v);
std::string domain_str(const types::FieldInfo& f);
// The first element of [t] outside f's domain, or -1.
int64_t first_outside(const ops::Tensor& t,
                      const types::FieldInfo& f,
                      double& bad);
// Whether a file's [t] may be converted to a field's [d].
bool convertible(RawType t, types::DType d);
// [n] elements of [t] at [src] converted to [d] at [dst]; the index of the
// first int that does not fit [d], or -1.
int64_t convert_elems(
    RawType t, const uint8_t* src, types::DType d, void* dst, int64_t n);
std::string wrong_dtype(int64_t item,
                        const std::string& source,
                        const types::FieldInfo& f,
                        RawType t);
/// The help line of a wrong dtype: how to convert the array, or how to
/// declare the field to take it.
std::vector<std::string> dtype_help(const types::FieldInfo& f, RawType t);
/// A ShapeError for an array of [t] where field [f] wants its dtype.
[[noreturn]] void throw_wrong_dtype(int64_t item,
                                    const std::string& source,
                                    const types::FieldInfo& f,
                                    RawType t);
std::string does_not_fit(int64_t item,
                         const std::string& source,
                         const types::FieldInfo& f,
                         RawType t);
/// [a], decoded by a loader from a format with its own element types (a
/// CSV's text, IDX's u8), converted to [f]'s dtype: an int that does not
/// fit it is a ShapeError. Files of typed arrays are never converted.
RawArray as_field_dtype(RawArray a,
                        const types::FieldInfo& f,
                        const std::string& source);
// A value of [t] (items [item0]..., [per_item] values each) outside [f]'s
// domain is a DomainError naming its item: item0 + k, or (*ids)[item0 + k]
// when [ids] names the items.
void check_domain(const ops::Tensor& t,
                  const types::FieldInfo& f,
                  int64_t per_item,
                  int64_t item0,
                  const std::string& source,
                  const std::vector<int64_t>* ids = nullptr);
// A field's size-variable axis: -1 when it has none.
int var_axis_of(const ops::Shape& fs,
                const types::FieldInfo& f,
                const std::string& source);
// Checks a field's array has a leading item axis and as many items as the
// fields before it: [first] names the first field seen ("" before it),
// [n] its item count. Both are set by the first field.
void check_item_count(const ops::Shape& array_shape,
                      const types::FieldInfo& f,
                      const std::string& source,
                      std::string& first,
                      int64_t& n);

}  // namespace ss::data::dataset_detail
