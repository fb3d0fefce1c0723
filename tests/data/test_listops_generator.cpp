// The LRA ListOps generator (data/generators/listops_generator): its values against an evaluator
// of the serialized text written here (a stack over the parenthesised left-deep tuples, as
// listops.py's to_value reads them), the exact serialization, the window, depth and argument
// counts, the draw order against a recursive reference sampler, determinism, the files, and the
// refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/platform/io/atomic_file.h"
#include "core/runtime/rng.h"
#include "data/generators/listops_generator.h"
#include "tests/temp_dir.h"

using namespace tn;

namespace {

/// What the evaluator learns from one source: its value and shape.
struct Evaluated {
  int value = -1;
  int64_t length = 0;    // tokens other than parentheses
  int64_t depth = 0;     // levels: a lone digit has depth 1
  int64_t min_args = 0;  // over all operators (0 when there is none)
  int64_t max_args = 0;
};

/// A stack item: a digit's value, `]`, an operator with the arguments it has so far, or "(".
struct Item {
  enum Kind { Open, Value, End, Operator } kind;
  std::string op;
  std::vector<int> args;
  int value = 0;
  int64_t depth = 1;  // levels below and including this item
};

int apply(const std::string& op, std::vector<int> args) {
  REQUIRE(!args.empty());
  std::sort(args.begin(), args.end());
  if (op == "[MIN") return args.front();
  if (op == "[MAX") return args.back();
  if (op == "[SM") {
    int sum = 0;
    for (int a : args) sum += a;
    return sum % 10;
  }
  REQUIRE(op == "[MED");
  const size_t n = args.size();
  const double median = n % 2 ? args[n / 2] : (args[n / 2 - 1] + args[n / 2]) / 2.0;
  return static_cast<int>(median);  // Python's int(np.median(...)): truncation
}

/// Pairs two items as to_value pairs a tuple (l, r): an operator takes r as an argument, or is
/// applied when r is `]`.
Item combine(const Item& l, const Item& r, Evaluated& e) {
  REQUIRE(l.kind == Item::Operator);
  Item out = l;
  if (r.kind == Item::End) {
    e.min_args = e.min_args == 0 ? static_cast<int64_t>(l.args.size()) : std::min<int64_t>(e.min_args, l.args.size());
    e.max_args = std::max<int64_t>(e.max_args, l.args.size());
    out.kind = Item::Value;
    out.value = apply(l.op, l.args);
    return out;
  }
  REQUIRE(r.kind == Item::Value);
  out.args.push_back(r.value);
  out.depth = std::max(l.depth, r.depth + 1);
  return out;
}

Evaluated evaluate(const std::string& source) {
  Evaluated e;
  std::vector<Item> stack;
  std::istringstream in(source);
  for (std::string token; in >> token;) {
    if (token == "(") {
      stack.push_back({Item::Open, "", {}, 0, 0});
      continue;
    }
    if (token == ")") {
      REQUIRE(stack.size() >= 3);
      const Item r = stack.back();
      stack.pop_back();
      const Item l = stack.back();
      stack.pop_back();
      REQUIRE(stack.back().kind == Item::Open);
      stack.back() = combine(l, r, e);
      continue;
    }
    ++e.length;
    if (token == "]") {
      stack.push_back({Item::End, "", {}, 0, 0});
    } else if (token[0] == '[') {
      REQUIRE((token == "[MIN" || token == "[MAX" || token == "[MED" || token == "[SM"));
      stack.push_back({Item::Operator, token, {}, 0, 1});
    } else {
      REQUIRE((token.size() == 1 && token[0] >= '0' && token[0] <= '9'));
      stack.push_back({Item::Value, "", {}, token[0] - '0', 1});
    }
  }
  REQUIRE(stack.size() == 1);
  REQUIRE(stack[0].kind == Item::Value);
  e.value = stack[0].value;
  e.depth = stack[0].depth;
  return e;
}

ListOpsOptions small_options(uint64_t seed) {
  ListOpsOptions o;
  o.min_length = 10;
  o.max_length = 100;
  o.train = 160;
  o.valid = 20;
  o.test = 20;
  o.seed = seed;
  return o;
}

/// The recursive sampler the generator's comment describes (listops.py's generate_tree with
/// tn::Rng), serialized as listops.py's to_string builds the tuple. `length` counts its tokens.
std::string reference_tree(Rng& rng, int64_t depth, const ListOpsOptions& o, int64_t& length) {
  const double r = depth < o.max_depth ? rng.uniform() : 1.0;
  if (r > 0.25) {
    ++length;
    return std::to_string(rng.next_u64() % 10);
  }
  const int64_t k = 2 + static_cast<int64_t>(rng.next_u64() % static_cast<uint64_t>(o.max_args - 1));
  std::vector<std::string> children;
  for (int64_t i = 0; i < k; ++i) children.push_back(reference_tree(rng, depth + 1, o, length));
  const char* ops[] = {"[MIN", "[MAX", "[MED", "[SM"};
  std::string t = ops[rng.next_u64() % 4];
  for (const std::string& c : children) t = "( " + t + " " + c + " )";
  length += 2;
  return "( " + t + " ] )";
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string error_of(const ListOpsOptions& o) {
  try {
    o.validate();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("listops evaluator: hand-written cases (MED floors an even count, SM wraps, nesting)") {
  CHECK(evaluate("7").value == 7);
  CHECK(evaluate("( ( ( [MAX 2 ) 9 ) ] )").value == 9);
  CHECK(evaluate("( ( ( [MIN 2 ) 9 ) ] )").value == 2);
  CHECK(evaluate("( ( ( [MED 1 ) 2 ) ] )").value == 1);
  CHECK(evaluate("( ( ( ( ( [MED 6 ) 3 ) 5 ) 4 ) ] )").value == 4);  // MED[3,4,5,6] = 4
  CHECK(evaluate("( ( ( ( [MED 9 ) 0 ) 4 ) ] )").value == 4);
  CHECK(evaluate("( ( ( ( [SM 9 ) 8 ) 7 ) ] )").value == 4);  // 24 % 10
  CHECK(evaluate("( ( ( [SM 5 ) 5 ) ] )").value == 0);
  const Evaluated nested = evaluate("( ( ( [MAX 2 ) ( ( ( [MIN 4 ) 6 ) ] ) ) ] )");
  CHECK(nested.value == 4);
  CHECK(nested.length == 7);
  CHECK(nested.depth == 3);
  const Evaluated deeper = evaluate("( ( ( ( [SM ( ( ( [MED 1 ) 2 ) ] ) ) ( ( ( [MAX 8 ) 9 ) ] ) ) 3 ) ] )");
  CHECK(deeper.value == 3);  // SM[1, 9, 3] = 13 % 10
  CHECK(deeper.min_args == 2);
  CHECK(deeper.max_args == 3);
}

TEST_CASE("listops generator: the exact serialization of a flat operator, e.g. [MAX 2 9]") {
  // Depth 2 with two arguments and 3 < L < 5: every tree is [OP a b]; all 4 * 100 of them.
  ListOpsOptions o;
  o.max_depth = 2;
  o.max_args = 2;
  o.min_length = 3;
  o.max_length = 5;
  o.train = 400;
  o.valid = o.test = 0;
  o.seed = 5;
  const ListOpsData data = generate_listops(o);
  REQUIRE(data.examples.size() == 400);
  bool found = false;
  for (const ListOpsExample& e : data.examples) {
    CHECK(e.length == 4);
    const std::vector<std::string> t = split(e.source, ' ');
    REQUIRE(t.size() == 10);
    CHECK(e.source == "( ( ( " + t[3] + " " + t[4] + " ) " + t[6] + " ) ] )");
    if (e.source == "( ( ( [MAX 2 ) 9 ) ] )") found = e.target == 9;
  }
  CHECK(found);
}

TEST_CASE("listops generator: a small set agrees with the evaluator and keeps the window, depth and widths") {
  const ListOpsOptions o = small_options(3);
  const ListOpsData data = generate_listops(o);
  REQUIRE(data.examples.size() == 200);
  CHECK(data.sampled == static_cast<int64_t>(data.examples.size()) + data.too_short + data.too_long + data.duplicates);
  std::set<std::string> distinct;
  std::set<int> labels;
  for (const ListOpsExample& example : data.examples) {
    INFO(example.source);
    const Evaluated e = evaluate(example.source);
    CHECK(example.target == e.value);
    CHECK(example.length == e.length);
    CHECK(e.length > o.min_length);
    CHECK(e.length < o.max_length);
    CHECK(e.depth <= o.max_depth);
    CHECK(e.min_args >= 2);
    CHECK(e.max_args <= o.max_args);
    distinct.insert(example.source);
    labels.insert(example.target);
  }
  CHECK(distinct.size() == data.examples.size());
  CHECK(labels.size() >= 8);
}

TEST_CASE("listops generator: the documented draw order, against a recursive reference sampler") {
  // The longest tree of depth 4 with 3 arguments has 53 tokens: no tree reaches max_length 60, so
  // the generator abandons none and its stream matches the reference draw for draw.
  ListOpsOptions o;
  o.max_depth = 4;
  o.max_args = 3;
  o.min_length = 5;
  o.max_length = 60;
  o.train = 60;
  o.valid = o.test = 20;
  o.seed = 11;
  const ListOpsData data = generate_listops(o);
  Rng rng(o.seed);
  std::vector<std::string> expected;
  std::set<std::string> seen;
  while (static_cast<int64_t>(expected.size()) < o.total()) {
    int64_t length = 0;
    std::string tree = reference_tree(rng, 1, o, length);
    if (length > o.min_length && length < o.max_length && seen.insert(tree).second) expected.push_back(tree);
  }
  REQUIRE(data.examples.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) CHECK(data.examples[i].source == expected[i]);
}

TEST_CASE("listops generator: the files, the same for a seed and different for another") {
  const test::TempDir dir("listops");
  const ListOpsOptions o = small_options(3);
  const ListOpsData data = generate_listops(o);
  const std::vector<std::string> files = write_listops(dir.file("a"), o, data, false);
  REQUIRE(files.size() == 3);
  CHECK(std::filesystem::path(files[0]).filename() == "basic_train.tsv");
  CHECK(std::filesystem::path(files[1]).filename() == "basic_val.tsv");
  CHECK(std::filesystem::path(files[2]).filename() == "basic_test.tsv");
  const int64_t counts[] = {o.train, o.valid, o.test};
  size_t next = 0;
  for (size_t f = 0; f < 3; ++f) {
    const std::string text = read_file(files[f]);
    REQUIRE(!text.empty());
    CHECK(text.back() == '\n');
    CHECK(text.find('\r') == std::string::npos);
    const std::vector<std::string> lines = split(text, '\n');
    REQUIRE(static_cast<int64_t>(lines.size()) == counts[f] + 1);
    CHECK(lines[0] == "Source\tTarget");
    for (size_t i = 1; i < lines.size(); ++i, ++next) {
      const std::vector<std::string> fields = split(lines[i], '\t');
      REQUIRE(fields.size() == 2);
      CHECK(fields[0] == data.examples[next].source);
      CHECK(fields[1] == std::to_string(evaluate(fields[0]).value));
    }
  }

  write_listops(dir.file("b"), o, generate_listops(o), false);
  ListOpsOptions other = o;
  other.seed = 4;
  write_listops(dir.file("c"), other, generate_listops(other), false);
  for (const char* name : {"basic_train.tsv", "basic_val.tsv", "basic_test.tsv"}) {
    CHECK((read_file(dir.file("a/") + name) == read_file(dir.file("b/") + name)));
    CHECK((read_file(dir.file("a/") + name) != read_file(dir.file("c/") + name)));
  }
}

TEST_CASE("listops generator: refuses impossible options, naming the option") {
  auto with = [](auto change) {
    ListOpsOptions o;
    change(o);
    return error_of(o);
  };
  CHECK(error_of(ListOpsOptions{}).empty());
  CHECK(contains(with([](ListOpsOptions& o) { o.max_depth = 0; }), "--max-depth 0:"));
  CHECK(contains(with([](ListOpsOptions& o) { o.max_args = 1; }), "--max-args 1:"));
  CHECK(contains(with([](ListOpsOptions& o) { o.max_args = 1; }), "at least 2"));
  CHECK(contains(with([](ListOpsOptions& o) { o.min_length = -1; }), "--min-length -1:"));
  CHECK(contains(with([](ListOpsOptions& o) { o.min_length = 1999; }), "--min-length 1999 --max-length 2000:"));
  CHECK(error_of(small_options(1)).empty());
  CHECK(contains(with([](ListOpsOptions& o) { o.valid = -2; }), "--valid -2:"));
  CHECK(contains(with([](ListOpsOptions& o) { o.train = o.valid = o.test = 0; }), "nothing to generate"));
  // Depth 3 with two arguments: at most 2 + 2 * (2 + 2 * 1) = 10 tokens.
  const std::string short_trees = with([](ListOpsOptions& o) {
    o.max_depth = 3;
    o.max_args = 2;
    o.min_length = 10;
  });
  CHECK(contains(short_trees, "the longest has 10 tokens"));
  CHECK(contains(short_trees, "--max-depth"));
  CHECK_THROWS_AS(generate_listops(ListOpsOptions{.max_args = 1}), ConfigError);
}

TEST_CASE("listops generator: gives up on a window it cannot fill, saying which options to change") {
  // With two arguments per operator every length is 1 + 3 * (operators): 11 is never reached.
  ListOpsOptions none;
  none.max_args = 2;
  none.min_length = 10;
  none.max_length = 12;
  none.train = 5;
  none.valid = none.test = 0;
  try {
    generate_listops(none, 100000);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(contains(e.what(), "no tree of 100000 sampled"));
    CHECK(contains(e.what(), "--min-length"));
  }
  // Depth 1: the root is a digit; only 10 distinct trees for 11 examples.
  ListOpsOptions few;
  few.max_depth = 1;
  few.min_length = 0;
  few.max_length = 2;
  few.train = 11;
  few.valid = few.test = 0;
  try {
    generate_listops(few, 100000);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(contains(e.what(), "only 10 distinct trees"));
    CHECK(contains(e.what(), "--train"));
  }
}

TEST_CASE("listops generator: never replaces files without overwrite, and refuses a file as the folder") {
  const test::TempDir dir("listops_out");
  const ListOpsOptions o = small_options(3);
  const ListOpsData data = generate_listops(o);
  const std::string out = dir.file("deep/er");
  write_listops(out, o, data, false);  // creates the missing parents
  const std::string before = read_file(out + "/basic_val.tsv");
  CHECK_THROWS_AS(check_listops_output(out, false), ConfigError);
  ListOpsOptions other = o;
  other.seed = 9;
  const ListOpsData other_data = generate_listops(other);
  CHECK_THROWS_AS(write_listops(out, other, other_data, false), ConfigError);
  CHECK((read_file(out + "/basic_val.tsv") == before));
  write_listops(out, other, other_data, true);
  CHECK((read_file(out + "/basic_val.tsv") != before));

  // Only one of the three files there is enough to refuse.
  const std::string partial = dir.file("partial");
  std::filesystem::create_directories(partial);
  dir.write("partial/basic_test.tsv", "keep me\n");
  try {
    write_listops(partial, o, data, false);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(contains(e.what(), "basic_test.tsv already exists"));
    CHECK(contains(e.what(), "--overwrite"));
  }
  CHECK(read_file(partial + "/basic_test.tsv") == "keep me\n");
  CHECK(!std::filesystem::exists(partial + "/basic_train.tsv"));

  const std::string file = dir.write("a_file", "x\n");
  CHECK_THROWS_AS(check_listops_output(file, true), ConfigError);
  CHECK_THROWS_AS(write_listops(file, o, data, true), ConfigError);
}
