// Copyright 2026 The cuhal Authors.
#include "fakecuda/device_profile.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/base/uuid.h"

namespace fakecuda {
namespace {

constexpr const char* kFormat = "cuhal-device-profile-1";

struct AttributeEntry {
  const char* name;
  int value;
};
constexpr AttributeEntry kAttributes[] = {
#define CUHAL_DEVICE_ATTRIBUTE(name, value) {#name, value},
#include "fakecuda/device_attribute_list.inc"
#undef CUHAL_DEVICE_ATTRIBUTE
};

// Deprecated aliases of cuda.h, accepted on input too. Looked up, like kAttributes, by a linear
// scan (profiles are parsed rarely): no lookup table is built at run time, so nothing is left on
// the heap when the drop-in libcuda.so.1 that contains this is unloaded.
constexpr AttributeEntry kAttributeAliases[] = {
    {"CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK", 8},
    {"CU_DEVICE_ATTRIBUTE_REGISTERS_PER_BLOCK", 12},
    {"CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED", 102},
};

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string_view AttributeName(int attribute) {
  for (const auto& a : kAttributes) {
    if (a.value == attribute) return a.name;
  }
  return {};
}

int AttributeFromName(std::string_view name) {
  for (const auto& a : kAttributes) {
    if (a.name == name) return a.value;
  }
  for (const auto& a : kAttributeAliases) {
    if (a.name == name) return a.value;
  }
  return -1;
}

int AttributeLimit() { return static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX); }

bool UuidFromString(std::string_view text, std::array<unsigned char, 16>* uuid) {
  if (text.substr(0, 4) == "GPU-") text.remove_prefix(4);
  std::array<unsigned char, 16> out{};
  size_t byte = 0;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '-') {
      ++i;
      continue;
    }
    if (i + 1 >= text.size() || byte >= out.size()) return false;
    int hi = HexDigit(text[i]);
    int lo = HexDigit(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[byte++] = static_cast<unsigned char>(hi * 16 + lo);
    i += 2;
  }
  if (byte != out.size()) return false;
  *uuid = out;
  return true;
}

bool ParseProfile(std::string_view json_text, DeviceProfile* profile, std::string* error) {
  auto fail = [error](std::string what) {
    if (error) *error = std::move(what);
    return false;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    // e.what() names the line and column of the problem. Not only parse_error: a number too
    // large for a double ("1E400") is out_of_range (found by fuzz/libfuzzer, device_profile).
    return fail(std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) return fail("top level: expected an object");
  DeviceProfile p;
  if (auto it = j.find("format"); it != j.end() && (!it->is_string() || *it != kFormat)) {
    return fail(std::string("format: expected \"") + kFormat + "\"");
  }
  auto name = j.find("name");
  if (name == j.end() || !name->is_string() || name->get<std::string>().empty()) {
    return fail("name: missing or not a non-empty string");
  }
  p.name = name->get<std::string>();
  auto uuid = j.find("uuid");
  if (uuid == j.end() || !uuid->is_string() || !UuidFromString(uuid->get<std::string>(), &p.uuid)) {
    return fail("uuid: missing or not of the form GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
  }
  auto bus = j.find("pci_bus_id");
  if (bus == j.end() || !bus->is_string()) return fail("pci_bus_id: missing or not a string");
  p.pci_bus_id = bus->get<std::string>();
  auto mem = j.find("total_memory");
  if (mem == j.end() || !mem->is_number_unsigned() || mem->get<std::uint64_t>() == 0) {
    return fail("total_memory: missing or not a positive integer");
  }
  p.total_memory = mem->get<std::uint64_t>();
  if (auto v = j.find("driver_version"); v != j.end()) {
    if (!v->is_number_integer()) return fail("driver_version: not an integer");
    std::int64_t version = v->get<std::int64_t>();
    if (v->is_number_unsigned() ? v->get<std::uint64_t>() > INT32_MAX
                                : version < INT32_MIN || version > INT32_MAX) {
      return fail("driver_version: out of int range");
    }
    p.driver_version = static_cast<int>(version);
  }
  auto attrs = j.find("attributes");
  if (attrs == j.end() || !attrs->is_object()) return fail("attributes: missing or not an object");
  for (auto it = attrs->begin(); it != attrs->end(); ++it) {
    int attr = AttributeFromName(it.key());
    if (attr < 0) return fail("attributes." + it.key() + ": unknown attribute");
    if (!it.value().is_number_integer()) return fail("attributes." + it.key() + ": not an integer");
    std::int64_t value = it.value().get<std::int64_t>();
    if ((it.value().is_number_unsigned() && it.value().get<std::uint64_t>() > INT32_MAX) ||
        value < INT32_MIN || value > INT32_MAX) {
      return fail("attributes." + it.key() + ": out of int range");
    }
    p.attributes[attr] = static_cast<int>(value);
  }
  *profile = std::move(p);
  return true;
}

bool LoadProfile(const std::string& path, DeviceProfile* profile, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    if (error) *error = path + ": cannot open for reading";
    return false;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string inner;
  if (!ParseProfile(buffer.str(), profile, &inner)) {
    if (error) *error = path + ": " + inner;
    return false;
  }
  return true;
}

std::string ProfileToJson(const DeviceProfile& profile) {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["name"] = profile.name;
  j["uuid"] = cuhal::FormatGpuUuid(profile.uuid);
  j["pci_bus_id"] = profile.pci_bus_id;
  j["total_memory"] = static_cast<std::uint64_t>(profile.total_memory);
  j["driver_version"] = profile.driver_version;
  nlohmann::ordered_json attrs = nlohmann::ordered_json::object();
  for (const auto& [attr, value] : profile.attributes) {
    std::string_view name = AttributeName(attr);
    if (!name.empty()) attrs[std::string(name)] = value;
  }
  j["attributes"] = std::move(attrs);
  return j.dump(2) + "\n";
}

void MakeDevicesDistinct(std::vector<DeviceProfile>* devices) {
  for (size_t i = 1; i < devices->size(); ++i) {
    DeviceProfile& d = (*devices)[i];
    auto clash = [&] {
      for (size_t j = 0; j < i; ++j) {
        if ((*devices)[j].uuid == d.uuid) return true;
      }
      return false;
    };
    while (clash()) {
      for (int b = 15; b >= 0 && ++d.uuid[static_cast<size_t>(b)] == 0; --b) {
      }
      unsigned domain = 0, bus = 0, dev = 0, fn = 0;
      if (std::sscanf(d.pci_bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &fn) == 4) {
        char text[32];
        std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", domain, (bus + 1) & 0xFF, dev, fn);
        d.pci_bus_id = text;
      }
    }
  }
}

std::vector<DeviceProfile> DistinctDevices(const DeviceProfile& profile, int count) {
  std::vector<DeviceProfile> devices(count > 0 ? static_cast<size_t>(count) : 0, profile);
  MakeDevicesDistinct(&devices);
  return devices;
}

}  // namespace fakecuda
