#pragma once
// UTF-8 well-formedness (RFC 3629, Unicode Table 3-7): what every text reader checks before it
// splits, pre-tokenizes or stores a line.
#include <cstddef>
#include <string_view>

namespace tn {

/// Byte offset of the first byte that does not begin a well-formed UTF-8 sequence (overlong forms,
/// surrogates U+D800..U+DFFF, code points above U+10FFFF and sequences cut short count as
/// malformed), or std::string_view::npos when all of `text` is well-formed. NUL bytes are valid.
size_t invalid_utf8_at(std::string_view text);

}  // namespace tn
