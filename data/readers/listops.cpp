#include "data/readers/listops.h"

#include <vector>

#include <filesystem>

#include "core/error.h"
#include "data/readers/text_file.h"
#include "data/tokenizers/symbol_vocab.h"

namespace tn {

namespace {
/// Where a ListOps split of the folder holding `path` comes from.
std::string hint(const std::string& path) {
  const std::string folder = std::filesystem::path(path).parent_path().string();
  return "the LRA release's lra_release/listops-1000/basic_{train,val,test}.tsv (`transnormer data fetch --lra` "
         "downloads the 8.23 GB release and unpacks them into <data root>/lra/listops-1000), or `transnormer data "
         "generate listops --out " + (folder.empty() ? std::string(".") : folder) + "` for files in the same format";
}

bool is_operator(std::string_view s) { return s == "[MIN" || s == "[MAX" || s == "[MED" || s == "[SM"; }
bool is_digit(std::string_view s) { return s.size() == 1 && s[0] >= '0' && s[0] <= '9'; }
/// The symbols and each parenthesis of `source`, in order.
std::vector<std::string_view> layout_tokens(std::string_view source) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < source.size()) {
    const char c = source[i];
    if (c == '(' || c == ')') {
      out.push_back(source.substr(i++, 1));
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      ++i;
    } else {
      const size_t start = i;
      while (i < source.size() && std::string_view(" \t\r\n()").find(source[i]) == std::string_view::npos) ++i;
      out.push_back(source.substr(start, i - start));
    }
  }
  return out;
}

/// "" when the parentheses of a bracket-balanced expression are where the official generator puts
/// them (lra.md §1: an operator with k arguments is the tree ((((op a1) a2) ... ak) ]), each pair
/// written "( left right )"): k + 1 `(` before the operator, a `)` after each argument and one after
/// its `]`. Otherwise names the first token out of place.
std::string parentheses_problem(std::string_view source, const std::vector<std::string_view>& symbols) {
  std::vector<int64_t> argc(symbols.size(), 0);  // arguments of the operator at each index
  std::vector<size_t> open;
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (is_operator(symbols[i])) {
      if (!open.empty()) ++argc[open.back()];
      open.push_back(i);
    } else if (symbols[i] == "]") {
      open.pop_back();
    } else if (!open.empty()) {
      ++argc[open.back()];
    }
  }
  const std::vector<std::string_view> tokens = layout_tokens(source);
  size_t at = 0;
  std::string problem;
  const auto expect = [&](std::string_view token) {
    if (problem.empty() && (at >= tokens.size() || tokens[at] != token))
      problem = "parentheses out of the official layout at token " + std::to_string(at + 1) + " (expected `" +
                std::string(token) + "`, found `" + (at < tokens.size() ? std::string(tokens[at].substr(0, 20)) : "the end") +
                "`; an operator with k arguments is written `( ( ... ( [OP a1 ) a2 ) ... ak ) ] )`)";
    ++at;
  };
  size_t depth = 0;
  for (size_t i = 0; i < symbols.size() && problem.empty(); ++i) {
    const std::string_view s = symbols[i];
    if (is_operator(s)) {
      for (int64_t k = 0; k <= argc[i]; ++k) expect("(");
      expect(s);
      ++depth;
      continue;
    }
    if (s == "]") {
      expect("]");
      expect(")");
      --depth;
    } else {
      expect(s);
    }
    if (depth > 0) expect(")");  // the end of an argument
  }
  if (problem.empty() && at < tokens.size())
    problem = "parentheses out of the official layout: `" + std::string(tokens[at].substr(0, 20)) + "` after the expression ends";
  return problem;
}
}  // namespace

const std::vector<std::string>& listops_labels() {
  static const std::vector<std::string> labels = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  return labels;
}

std::string listops_problem(std::string_view source) {
  int64_t parens = 0;
  for (char c : source) {
    parens += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (parens < 0) return "a `)` closes no `(`";
  }
  if (parens != 0) return std::to_string(parens) + " `(` left open";
  std::vector<std::string_view> symbols;
  split_listops(source, symbols);
  if (symbols.empty()) return "the expression is empty";
  std::vector<int64_t> args;  // arguments of each open operator
  for (size_t i = 0; i < symbols.size(); ++i) {
    const std::string_view s = symbols[i];
    if (i > 0 && args.empty()) return "symbols after the outermost expression ends";
    if (is_operator(s)) {
      if (!args.empty()) ++args.back();
      args.push_back(0);
    } else if (s == "]") {
      if (args.empty()) return "a `]` closes no operator";
      if (args.back() == 0) return "an operator has no argument before its `]`";
      args.pop_back();
    } else if (is_digit(s)) {
      if (!args.empty()) ++args.back();
    } else {
      return "unknown symbol `" + std::string(s.substr(0, 20)) + "` (ListOps has [MIN [MAX [MED [SM ] and the digits 0-9)";
    }
  }
  if (!args.empty()) return std::to_string(args.size()) + " operator(s) without their closing `]`";
  return parentheses_problem(source, symbols);
}

SentenceSplit read_listops_split(const std::string& path, const std::string& name, SentenceSplit::Role role) {
  SentenceSplit split;
  split.name = name;
  split.role = role;
  split.file = path;
  const std::string text = read_text_file(path, "a ListOps .tsv file", hint(path));
  for_each_line(text, [&](int64_t line, std::string_view row) {
    const std::vector<std::string_view> fields = split_tabs(row);
    if (line == 1) {
      if (fields.size() != 2 || fields[0] != "Source" || fields[1] != "Target")
        throw DataError(at_line(path, line) + ": expected the header `Source<TAB>Target`, found \"" +
                        std::string(row.substr(0, 60)) + "\" (" + hint(path) + ")");
      return;
    }
    if (fields.size() != 2)
      throw DataError(at_line(path, line) + ": expected 2 tab-separated columns (Source, Target), found " +
                      std::to_string(fields.size()) + "; each row is an expression, a tab and its value 0-9");
    if (!is_digit(fields[1]))
      throw DataError(at_line(path, line) + ": target \"" + std::string(fields[1].substr(0, 20)) +
                      "\" is not a value 0-9 (ListOps has 10 classes); fix or remove the row");
    if (const std::string problem = listops_problem(fields[0]); !problem.empty())
      throw DataError(at_line(path, line) + ": malformed expression: " + problem + "; fix or remove the row");
    SentenceExample example;
    example.id = std::to_string(split.rows.size());
    example.a = std::string(fields[0]);
    example.label = fields[1][0] - '0';
    example.line = line;
    split.rows.push_back(std::move(example));
  });
  if (split.rows.empty())
    throw DataError(path + ": has no rows after its header (a ListOps split holds one example per line; " + hint(path) +
                    ")");
  return split;
}

}  // namespace tn
