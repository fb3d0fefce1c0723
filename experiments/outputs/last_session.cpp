#include "experiments/outputs/last_session.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace tn {

LastSession last_session(const std::string& dir) {
  std::ifstream in((std::filesystem::path(dir) / "run.json").string());
  if (!in) return {};
  const nlohmann::json history = nlohmann::json::parse(in, nullptr, false);
  if (!history.is_object() || !history.contains("sessions") || !history["sessions"].is_array() ||
      history["sessions"].empty() || !history["sessions"].back().is_object())
    return {};
  const nlohmann::json& last = history["sessions"].back();
  auto text = [&](const char* key) {
    return last.contains(key) && last[key].is_string() ? last[key].get<std::string>() : std::string();
  };
  return {text("outcome"), text("command")};
}

}  // namespace tn
