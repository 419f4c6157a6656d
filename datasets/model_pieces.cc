#include "datasets/model_pieces.h"

#include <fmt/format.h>
#include <utf8proc.h>

#include <algorithm>

#include "core/error.h"
#include "datasets/unicode.h"

namespace sift {
namespace {

// fairseq's dictionary: <s> 0, <pad> 1, </s> 2, <unk> 3, then the pieces from 1 on.
constexpr int64_t kFairseqBos = 0, kFairseqEos = 2, kFairseqUnk = 3, kFairseqOffset = 1;
// SentencePiece's word-start mark, U+2581.
constexpr std::string_view kWordStart = "\xe2\x96\x81";

// Python's str.isspace(): what str.split() splits on.
bool python_space(int32_t cp) {
  return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

// " ".join(text.split()).
std::string collapsed_spaces(std::string_view text) {
  std::string out;
  bool gap = false;
  for (size_t i = 0; i < text.size();) {
    const Utf8Char c = decode_utf8(text, i);
    if (c.cp >= 0 && python_space(c.cp)) {
      gap = !out.empty();
    } else {
      if (gap) out.push_back(' ');
      gap = false;
      out.append(text.substr(i, c.length));
    }
    i += c.length;
  }
  return out;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

// NFKD without the combining marks, then lower-cased: code point by code point.
std::string without_accents(const std::string& text, bool lowercase) {
  const std::string nfkd =
      utf8proc_normalized(text, UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT).value_or(text);
  std::string out;
  for (size_t i = 0; i < nfkd.size();) {
    const Utf8Char c = decode_utf8(nfkd, i);
    if (c.cp < 0) {
      out.append(nfkd.substr(i, c.length));
    } else if (utf8proc_get_property(c.cp)->combining_class == 0) {
      append_utf8(lowercase ? utf8proc_tolower(c.cp) : c.cp, out);
    }
    i += c.length;
  }
  return out;
}

// The last code point of `s` before byte `end`.
int32_t code_point_before(const std::string& s, size_t end) {
  size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xc0) == 0x80) --start;
  return decode_utf8(s, start).cp;
}

// AlbertTokenizer's rule for a piece such as "▁1999,": a digit then a comma.
bool digit_then_comma(const std::string& piece) {
  if (piece.size() < 2 || piece.back() != ',') return false;
  const int32_t cp = code_point_before(piece, piece.size() - 1);
  return cp >= 0 && utf8proc_category(cp) == UTF8PROC_CATEGORY_ND;
}

}  // namespace

std::string albert_normalized(std::string_view text, bool lowercase) {
  std::string s = collapsed_spaces(text);
  replace_all(s, "``", "\"");
  replace_all(s, "''", "\"");
  return without_accents(s, lowercase);
}

ModelPieces::ModelPieces(std::shared_ptr<const SentencePieceModel> pieces, PieceIds scheme,
                         bool lowercase)
    : pieces_(std::move(pieces)), scheme_(scheme), lowercase_(lowercase) {
  if (scheme_ == PieceIds::fairseq) {
    first_ = kFairseqBos;
    last_ = kFairseqEos;
    return;
  }
  const auto special = [this](const char* piece) {
    const int64_t id = pieces_->piece_to_id(piece);
    if (id == pieces_->unk_id()) {
      throw Error(
          fmt::format("{}: no {} piece (tokenizer.piece_ids albert reads ALBERT's "
                      "spiece.model, which has [CLS] and [SEP])",
                      pieces_->path(), piece));
    }
    return id;
  };
  first_ = special("[CLS]");
  last_ = special("[SEP]");
}

void ModelPieces::albert_pieces(std::string_view text, std::vector<int64_t>& ids) const {
  std::vector<int64_t> raw, cut;
  pieces_->encode(albert_normalized(text, lowercase_), raw);
  for (const int64_t id : raw) {
    const std::string piece = pieces_->id_to_piece(id);
    if (!digit_then_comma(piece)) {
      ids.push_back(id);
      continue;
    }
    // The piece before the comma again, without its word-start marks; a mark it gains
    // that the piece had not is dropped (a lone mark entirely).
    std::string digits = piece.substr(0, piece.size() - 1);
    replace_all(digits, kWordStart, "");
    pieces_->encode(digits, cut);
    const bool marked = piece.compare(0, kWordStart.size(), kWordStart) == 0;
    for (size_t k = 0; k < cut.size(); ++k) {
      std::string p = pieces_->id_to_piece(cut[k]);
      if (k == 0 && !marked && p.compare(0, kWordStart.size(), kWordStart) == 0) {
        if (p.size() == kWordStart.size()) continue;
        ids.push_back(pieces_->piece_to_id(p.substr(kWordStart.size())));
        continue;
      }
      ids.push_back(cut[k]);
    }
    ids.push_back(pieces_->piece_to_id(","));
  }
}

void ModelPieces::encode(std::string_view text, size_t max_length,
                         std::vector<int64_t>& ids) const {
  ids.clear();
  ids.push_back(first_);
  if (scheme_ == PieceIds::albert) {
    albert_pieces(text, ids);
  } else {
    std::vector<int64_t> raw;
    pieces_->encode(text, raw);
    const int64_t unk = pieces_->unk_id();
    for (const int64_t p : raw) ids.push_back(p == unk ? kFairseqUnk : p + kFairseqOffset);
  }
  if (max_length > 0 && ids.size() + 1 > max_length)
    ids.resize(std::max<size_t>(max_length, 2) - 1);
  ids.push_back(last_);
}

int64_t ModelPieces::num_ids() const {
  return scheme_ == PieceIds::albert ? pieces_->size() : pieces_->size() + kFairseqOffset + 1;
}

}  // namespace sift
