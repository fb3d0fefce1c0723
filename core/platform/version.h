#pragma once
// The program's version: the release number (CMakeLists.txt `project(... VERSION)`) and, when built
// from a git checkout, `git describe --tags --always --dirty` at build time: "0.9.0 (git 6ce1f8e)".
// `transnormer --version` prints it; every run records it in run.json.
namespace tn {

const char* program_version();

}  // namespace tn
