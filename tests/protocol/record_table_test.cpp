// The per-system record exists once (kernels/ensemble/system_record.hpp): the proto's
// SystemSummaries must name the same fields, in the same order, with the same element types and
// widths, and every consumer iterates the table; here the table is checked against the
// descriptor, and a summaries chunk round trip covers every field without naming one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/ensemble/system_record.hpp"
#include "service/protocol/result_assembler.hpp"
#include "service/protocol/result_chunks.hpp"
#include "service/runspec/spec_text.hpp"
#include "ukes/v1/ukes.pb.h"

namespace ukes {
namespace {

using google::protobuf::FieldDescriptor;

v1::RecordWidth proto_width(Width w) {
  switch (w) {
    case Width::kOne:
      return v1::RECORD_WIDTH_ONE;
    case Width::kCoordinates:
      return v1::RECORD_WIDTH_COORDINATES;
    case Width::kResidualSlots:
      return v1::RECORD_WIDTH_RESIDUAL_SLOTS;
    case Width::kParams:
      return v1::RECORD_WIDTH_PARAMS;
    case Width::kControlParams:
      return v1::RECORD_WIDTH_CONTROL_PARAMS;
    case Width::kEvents:
      return v1::RECORD_WIDTH_EVENTS;
    case Width::kEventRecords:
      return v1::RECORD_WIDTH_EVENT_RECORDS;
    case Width::kEventCoordinates:
      return v1::RECORD_WIDTH_EVENT_COORDINATES;
  }
  return v1::RECORD_WIDTH_ONE;
}

FieldDescriptor::CppType proto_type(Encoding e) {
  switch (e) {
    case Encoding::kReal:
      return FieldDescriptor::CPPTYPE_DOUBLE;
    case Encoding::kCount:
      return FieldDescriptor::CPPTYPE_INT64;
    case Encoding::kStatus:
      return FieldDescriptor::CPPTYPE_ENUM;
  }
  return FieldDescriptor::CPPTYPE_STRING;
}

TEST(RecordTable, SystemSummariesHasEveryFieldOfTheTableAndNoOther) {
  std::vector<FieldInfo> table;
  BatchOutputView results;
  BatchInputView inputs;
  for_each_result([&](const FieldInfo& f, auto*) { table.push_back(f); }, results);
  for_each_input([&](const FieldInfo& f, auto*) { table.push_back(f); }, inputs);
  const google::protobuf::Descriptor* d = v1::SystemSummaries::descriptor();
  ASSERT_EQ(d->field_count(), 2 + static_cast<int>(table.size()));
  EXPECT_EQ(d->field(0)->name(), "first_id");
  EXPECT_EQ(d->field(1)->name(), "count");
  for (std::size_t k = 0; k < table.size(); ++k) {
    const FieldDescriptor* field = d->field(static_cast<int>(k) + 2);
    SCOPED_TRACE(table[k].name);
    EXPECT_EQ(field->name(), table[k].name);
    EXPECT_TRUE(field->is_repeated());
    EXPECT_EQ(field->cpp_type(), proto_type(table[k].encoding));
    EXPECT_EQ(field->options().GetExtension(v1::record_width), proto_width(table[k].width));
  }
}

TEST(RecordTable, ByteSizesFollowTheTable) {
  RecordShape shape{4, 8, 19};  // scara
  // status (4), t, q (4), qd (4), residual_max (8), force_max, control_effort_max,
  // inconsistency_max (doubles), steps, rejected (int64).
  EXPECT_EQ(result_bytes_per_system(shape), 4u + 8u * (1 + 4 + 4 + 8 + 1 + 1 + 1) + 16u);
  EXPECT_EQ(input_bytes_per_system(shape), 8u * (19 + 4 + 4));
  // q, qd, residual, force, control.
  EXPECT_EQ(trajectory_bytes_per_sample(shape), 8u * (4 + 4 + 8 + 4 + 4));
  shape.control_params = shape.params;  // a controlled run: the controller's parameters too
  EXPECT_EQ(input_bytes_per_system(shape), 8u * (19 + 4 + 4 + 19));
}

// Every field of every system survives summary_chunks and the assembler, whatever the chunk
// budget: values are distinct per field, component and system, so a swapped field or a wrong
// stride shows.
class RecordTableRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(RecordTableRoundTrip, SummariesRoundTripEveryField) {
  const std::string text = GetParam();
  RunSpec spec = parse_run_spec(parse_spec_text(text));
  BatchResults results;
  results.allocate(spec.batch, spec.settings.samples, {}, spec.settings.events);
  double next = 1.0;
  for_each_result(
      [&](const FieldInfo& f, auto& values) {
        for (auto& v : values) {
          using Value = std::remove_reference_t<decltype(v)>;
          v = f.encoding == Encoding::kStatus
                  ? static_cast<Value>(static_cast<int>(next) % kStatusCount)
                  : static_cast<Value>(next);
          next += 1.0;
        }
      },
      results);
  for_each_input(
      [&](const FieldInfo&, std::vector<double>& values) {
        for (auto& v : values) v = (next += 0.5);
      },
      spec.batch);
  for (std::size_t budget : {std::size_t{100}, std::size_t{1000}, kChunkBytes}) {
    SCOPED_TRACE(budget);
    ResultAssembler assembler;
    v1::StreamJobResultsResponse header;
    header.set_sequence(1);
    header.mutable_header()->set_count(spec.batch.count);
    header.mutable_header()->set_spec_json(text);
    assembler.add(header);
    std::int64_t sequence = 1;
    for (auto& chunk : summary_chunks(spec.batch, results, 0, budget)) {
      v1::StreamJobResultsResponse r;
      r.set_sequence(++sequence);
      *r.mutable_summaries() = std::move(chunk);
      assembler.add(r);
    }
    EXPECT_EQ(assembler.systems_received(), spec.batch.count);
    for_each_result([](const FieldInfo& f, const auto& got,
                       const auto& want) { EXPECT_EQ(got, want) << f.name; },
                    assembler.outcome().results, results);
    for_each_input([](const FieldInfo& f, const auto& got,
                      const auto& want) { EXPECT_EQ(got, want) << f.name; },
                   assembler.spec().batch, spec.batch);
  }
}

// Without and with events, whose fields have widths of their own (two events of 3 and 5 records:
// a stride of 5).
INSTANTIATE_TEST_SUITE_P(
    Specs, RecordTableRoundTrip,
    ::testing::Values(R"({"model": "slider_crank", "sweep": {"count": 7}})",
                      R"({"model": "slider_crank", "sweep": {"count": 7}, "events": [
                            {"name": "a", "condition": "th", "max": 3},
                            {"name": "b", "condition": "x - 0.3", "max": 5}]})"));

}  // namespace
}  // namespace ukes
