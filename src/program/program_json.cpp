#include "program/program_json.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "program/checker.hpp"

namespace commscale {
namespace {

using nlohmann::json;

constexpr std::string_view kWhere = "step program JSON";

// The op (or object) a key belongs to, for messages.
std::string owner(const json& j) {
  if (j.is_object() && j.contains("name") && j["name"].is_string())
    return fmt::format("op '{}'", excerpt(j["name"].get<std::string>()));
  return "object";
}

void only_keys(const json& j, std::initializer_list<std::string_view> allowed) {
  if (!j.is_object()) throw InputError(kWhere, fmt::format("{} is not an object", json_excerpt(j)));
  for (const auto& item : j.items()) {
    bool known = false;
    for (std::string_view key : allowed) known = known || item.key() == key;
    if (!known) throw InputError(kWhere, fmt::format("{}: unknown key \"{}\"", owner(j), excerpt(item.key())));
  }
}

const json& at(const json& j, const char* key) {
  if (!j.contains(key)) throw InputError(kWhere, fmt::format("{}: missing key \"{}\"", owner(j), key));
  return j[key];
}

template <class T>
T number(const json& j, const char* key) {
  const json& v = at(j, key);
  if (!v.is_number()) throw InputError(kWhere, fmt::format("{}: \"{}\" is {}, not a number", owner(j), key, json_excerpt(v)));
  return v.get<T>();
}

std::string text(const json& j, const char* key) {
  const json& v = at(j, key);
  if (!v.is_string()) throw InputError(kWhere, fmt::format("{}: \"{}\" is {}, not a string", owner(j), key, json_excerpt(v)));
  return printable(v.get<std::string>());  // op names are printed to terminals (diff-trace)
}

std::string where(const json& j, const char* key) { return fmt::format("{}: {}: {}", kWhere, owner(j), key); }

void payload_to_json(json& j, const OpPayload& payload) {
  if (const auto* g = std::get_if<Gemm>(&payload)) {
    j["type"] = "gemm";
    j.update({{"m", g->m},
              {"n", g->n},
              {"k", g->k},
              {"batch", g->batch},
              {"dtype", name(g->dtype)},
              {"accumulate_dtype", name(g->accumulate)},
              {"flops", g->flops.value()}});
    if (is_fp8(g->dtype)) {  // absent: one type for inputs and output
      j["b_dtype"] = name(g->b_dtype);
      j["out_dtype"] = name(g->out_dtype);
    }
    if (g->flash) j["flash"] = true;  // absent: a plain GEMM
    if (g->flash_continued) j["flash_continued"] = true;
    if (g->flash_dropout) j["flash_dropout"] = true;
    if (g->flash_sdpa) j["flash_sdpa"] = true;
    if (g->flash_backward) j["flash_backward"] = true;
  } else if (const auto* k = std::get_if<MemoryKernel>(&payload)) {
    j["type"] = "memory";
    j.update({{"kernel", name(k->kind)},
              {"bytes_read", k->bytes_read.count()},
              {"bytes_written", k->bytes_written.count()},
              {"elements", k->elements}});
    if (k->kernels != KernelSet::kFused) j["kernels"] = name(k->kernels);  // absent: fused
  } else if (const auto* c = std::get_if<CollectiveOp>(&payload)) {
    j["type"] = "collective";
    j.update(
        {{"collective", name(c->kind)}, {"group", c->group}, {"bytes", c->bytes.count()}, {"dtype", name(c->dtype)}});
  } else if (const auto* p = std::get_if<PointToPoint>(&payload)) {
    j["type"] = "p2p";
    j.update({{"direction", name(p->direction)},
              {"group", p->group},
              {"peer", p->peer},
              {"bytes", p->bytes.count()},
              {"dtype", name(p->dtype)}});
  } else {
    const auto& h = std::get<HostCopy>(payload);
    j["type"] = "host_copy";
    j.update({{"direction", name(h.direction)}, {"bytes", h.bytes.count()}});
  }
}

OpPayload payload_from_json(const json& j) {
  const std::string type = text(j, "type");
  static constexpr std::array<std::string_view, 8> common = {"id",   "name",       "stream", "phase",
                                                             "deps", "microbatch", "layer",  "type"};
  const auto keys = [&](std::initializer_list<std::string_view> extra) {
    std::vector<std::string_view> all(common.begin(), common.end());
    all.insert(all.end(), extra.begin(), extra.end());
    for (const auto& item : j.items()) {
      if (std::find(all.begin(), all.end(), item.key()) == all.end()) {
        throw InputError(kWhere, fmt::format("{}: unknown key \"{}\" for type {}", owner(j), item.key(), type));
      }
    }
  };
  if (type == "gemm") {
    keys({"m", "n", "k", "batch", "dtype", "accumulate_dtype", "flops", "flash", "flash_continued", "flash_dropout",
          "flash_sdpa", "flash_backward", "b_dtype", "out_dtype"});
    Gemm g = make_gemm(number<std::int64_t>(j, "m"), number<std::int64_t>(j, "n"), number<std::int64_t>(j, "k"),
                       number<std::int64_t>(j, "batch"), parse_element_type(text(j, "dtype"), where(j, "dtype")));
    g.accumulate = parse_data_type(text(j, "accumulate_dtype"), where(j, "accumulate_dtype"));
    if (is_fp8(g.dtype)) {
      g.b_dtype = parse_element_type(text(j, "b_dtype"), where(j, "b_dtype"));
      g.out_dtype = parse_data_type(text(j, "out_dtype"), where(j, "out_dtype"));
    }
    g.flops = Flops(number<double>(j, "flops"));
    const auto flag = [&](const char* key) {
      if (!j.contains(key)) return false;
      if (!j.at(key).is_boolean()) throw InputError(where(j, key), "not true or false", "a boolean");
      return j.at(key).get<bool>();
    };
    g.flash = flag("flash");
    g.flash_continued = flag("flash_continued");
    g.flash_dropout = flag("flash_dropout");
    g.flash_sdpa = flag("flash_sdpa");
    g.flash_backward = flag("flash_backward");
    return g;
  }
  if (type == "memory") {
    keys({"kernel", "kernels", "bytes_read", "bytes_written", "elements"});
    return MemoryKernel{Bytes(number<std::uint64_t>(j, "bytes_read")), Bytes(number<std::uint64_t>(j, "bytes_written")),
                        number<std::uint64_t>(j, "elements"),
                        parse_memory_kernel_kind(text(j, "kernel"), where(j, "kernel")),
                        j.contains("kernels") ? parse_kernel_set(text(j, "kernels"), where(j, "kernels"))
                                              : KernelSet::kFused};
  }
  if (type == "collective") {
    keys({"collective", "group", "bytes", "dtype"});
    return CollectiveOp{parse_collective(text(j, "collective"), where(j, "collective")),
                        number<std::uint32_t>(j, "group"), Bytes(number<std::uint64_t>(j, "bytes")),
                        parse_data_type(text(j, "dtype"), where(j, "dtype"))};
  }
  if (type == "p2p") {
    keys({"direction", "group", "peer", "bytes", "dtype"});
    return PointToPoint{parse_p2p_direction(text(j, "direction"), where(j, "direction")),
                        number<std::uint32_t>(j, "group"), number<int>(j, "peer"),
                        Bytes(number<std::uint64_t>(j, "bytes")), parse_data_type(text(j, "dtype"), where(j, "dtype"))};
  }
  if (type == "host_copy") {
    keys({"direction", "bytes"});
    return HostCopy{parse_copy_direction(text(j, "direction"), where(j, "direction")),
                    Bytes(number<std::uint64_t>(j, "bytes"))};
  }
  throw InputError(where(j, "type"), fmt::format("unknown op type \"{}\"", type),
                   "gemm, memory, collective, p2p or host_copy");
}

}  // namespace

void to_json(json& j, const Op& op) {
  j = {{"id", op.id},
       {"name", op.name},
       {"stream", name(op.stream)},
       {"phase", name(op.phase)},
       {"deps", op.deps},
       {"microbatch", op.microbatch},
       {"layer", op.layer}};
  payload_to_json(j, op.payload);
}

void from_json(const json& j, Op& op) {
  if (!j.is_object()) throw InputError(kWhere, fmt::format("an op is {}, not an object", json_excerpt(j)));
  op.id = number<OpId>(j, "id");
  op.name = text(j, "name");
  op.stream = parse_stream(text(j, "stream"), where(j, "stream"));
  op.phase = parse_phase(text(j, "phase"), where(j, "phase"));
  const json& deps = at(j, "deps");
  if (!deps.is_array()) throw InputError(where(j, "deps"), "not an array of op ids");
  op.deps.clear();
  for (const json& d : deps) {
    if (!d.is_number_unsigned()) throw InputError(where(j, "deps"), fmt::format("{} is not an op id", json_excerpt(d)));
    op.deps.push_back(d.get<OpId>());
  }
  op.microbatch = number<int>(j, "microbatch");
  op.layer = number<int>(j, "layer");
  op.payload = payload_from_json(j);
}

void to_json(json& j, const Group& g) { j = {{"name", name(g.role)}, {"members", g.members}}; }

void from_json(const json& j, Group& g) {
  only_keys(j, {"name", "members"});
  g.role = parse_group_role(text(j, "name"), fmt::format("{}: a group's name", kWhere));
  const json& members = at(j, "members");
  if (!members.is_array()) throw InputError(kWhere, fmt::format("group '{}': members is not an array", name(g.role)));
  g.members = members.get<std::vector<int>>();
}

void to_json(json& j, const RankProgram& r) { j = {{"rank", r.rank}, {"program", r.program}, {"groups", r.groups}}; }

void from_json(const json& j, RankProgram& r) {
  only_keys(j, {"rank", "program", "groups"});
  r.rank = number<int>(j, "rank");
  r.program = number<int>(j, "program");
  r.groups = at(j, "groups").get<std::vector<Group>>();
}

void to_json(json& j, const ProgramSet& set) {
  j = {{"schema_version", kProgramSchemaVersion},
       {"kind", "commscale-step-program"},
       {"world_size", set.world_size},
       {"programs", set.programs},
       {"ranks", set.ranks}};
}

void from_json(const json& j, ProgramSet& set) {
  only_keys(j, {"schema_version", "kind", "world_size", "programs", "ranks"});
  if (number<int>(j, "schema_version") != kProgramSchemaVersion) {
    throw InputError(fmt::format("{}: schema_version", kWhere), fmt::format("{}", json_excerpt(j["schema_version"])),
                     fmt::format("{}", kProgramSchemaVersion));
  }
  set.world_size = number<int>(j, "world_size");
  set.programs = at(j, "programs").get<std::vector<std::vector<Op>>>();
  set.ranks = at(j, "ranks").get<std::vector<RankProgram>>();
}

ProgramSet read_program_set(const json& doc, std::string_view file) {
  ProgramSet set;
  try {
    set = doc.get<ProgramSet>();
  } catch (const json::exception& e) {
    throw InputError(file, fmt::format("is not a step program: {}", e.what()), "a file from plan --dump-program");
  }
  const ProgramCheck check = check_program(set, 1);
  if (!check.ok()) {
    throw InputError(file, fmt::format("is not a runnable step program: {}", check.problems.front()),
                     "a file from plan --dump-program");
  }
  return set;
}

}  // namespace commscale
