#include "framework/runtime/base/checkpoint_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

#include "core/crc32.h"
#include "core/error.h"

namespace sift {
namespace {

constexpr char kMagic[8] = {'S', 'I', 'F', 'T', 'C', 'K', 'P', 'T'};
constexpr size_t kHeader = sizeof(kMagic) + 4 + 8 + 4;

Error corrupted(const std::string& path) {
  return Error(fmt::format("{}: corrupted checkpoint", path));
}

// CRC-32 of the next `length` bytes of `in`, read in 1 MiB pieces.
uint32_t crc32_of_stream(std::ifstream& in, uint64_t length) {
  std::vector<char> buffer(1 << 20);
  uint32_t crc = 0;
  while (length > 0 && in) {
    const auto n = static_cast<std::streamsize>(std::min<uint64_t>(length, buffer.size()));
    in.read(buffer.data(), n);
    crc = crc32_update(crc, std::string_view(buffer.data(), static_cast<size_t>(in.gcount())));
    length -= static_cast<uint64_t>(in.gcount());
  }
  return crc;
}

}  // namespace

void throw_corrupted_tensor(const std::string& path, const std::string& name) {
  throw Error(fmt::format("{}: corrupted checkpoint (tensor '{}')", path, name));
}

void Cursor::need(uint64_t n) const {
  if (n > data_.size() - pos_) throw corrupted(path_);
}

void Cursor::read_into(char* out, uint64_t n) {
  need(n);
  std::memcpy(out, data_.data() + pos_, n);
  pos_ += n;
}

std::string_view Cursor::get_view() {
  const auto n = get<uint64_t>();
  need(n);
  const std::string_view v = data_.substr(pos_, n);
  pos_ += n;
  return v;
}

FileCursor::FileCursor(std::ifstream& in, uint64_t offset, uint64_t length, const std::string& path)
    : in_(in), position_(offset), left_(length), path_(path) {
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(offset));
}

std::string FileCursor::get_bytes() {
  const auto n = get<uint64_t>();
  if (n > left_) throw corrupted(path_);
  std::string s(n, '\0');
  read_into(s.data(), n);
  return s;
}

void FileCursor::read_into(char* out, uint64_t n) {
  if (n > left_ || !in_.read(out, static_cast<std::streamsize>(n))) throw corrupted(path_);
  position_ += n;
  left_ -= n;
}

void FileCursor::skip(uint64_t n) {
  if (n > left_ || !in_.seekg(static_cast<std::streamoff>(n), std::ios::cur)) {
    throw corrupted(path_);
  }
  position_ += n;
  left_ -= n;
}

std::string checkpoint_header(uint32_t version, uint64_t length, uint32_t crc) {
  std::string header(kMagic, sizeof(kMagic));
  header.append(reinterpret_cast<const char*>(&version), sizeof(version));
  header.append(reinterpret_cast<const char*>(&length), sizeof(length));
  header.append(reinterpret_cast<const char*>(&crc), sizeof(crc));
  return header;
}

StoredCheckpoint read_checkpoint(const std::string& path,
                                 const std::vector<std::string>& leave_on_disk) {
  auto file = std::make_shared<std::ifstream>(path, std::ios::binary);
  std::ifstream& in = *file;
  if (!in) throw Error(fmt::format("cannot open checkpoint {}: {}", path, std::strerror(errno)));
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  char header[kHeader] = {};
  in.read(header, static_cast<std::streamsize>(std::min<uint64_t>(size, kHeader)));
  if (size < sizeof(kMagic) || std::memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    throw Error(fmt::format("{} is not a Sift checkpoint", path));
  }
  if (size < kHeader) throw Error(fmt::format("{}: truncated checkpoint", path));
  uint32_t version, crc;
  uint64_t length;
  std::memcpy(&version, header + 8, 4);
  std::memcpy(&length, header + 12, 8);
  std::memcpy(&crc, header + 20, 4);
  if (version > kCheckpointVersion) {
    throw Error(
        fmt::format("{}: checkpoint format version {} is newer than this build "
                    "supports ({})",
                    path, version, kCheckpointVersion));
  }
  if (size - kHeader != length) {
    throw Error(
        fmt::format("{}: truncated checkpoint ({} of {} bytes)", path, size - kHeader, length));
  }
  // Checked before anything is parsed: a damaged length field is reported as damage.
  if (crc32_of_stream(in, length) != crc) {
    throw Error(fmt::format("{}: corrupted checkpoint (checksum mismatch)", path));
  }
  FileCursor cursor(in, kHeader, length, path);
  StoredCheckpoint checkpoint;
  checkpoint.meta = nlohmann::json::parse(cursor.get_bytes(), nullptr, /*allow_exceptions=*/false);
  if (checkpoint.meta.is_discarded()) throw corrupted(path);
  const auto sections = cursor.get<uint32_t>();
  for (uint32_t i = 0; i < sections; ++i) {
    std::string name = cursor.get_bytes();
    if (std::find(leave_on_disk.begin(), leave_on_disk.end(), name) == leave_on_disk.end()) {
      checkpoint.blobs[name] = cursor.get_bytes();
      continue;
    }
    const auto bytes = cursor.get<uint64_t>();
    checkpoint.on_disk[name] = SectionRef{path, file, cursor.position(), bytes};
    cursor.skip(bytes);
  }
  return checkpoint;
}

}  // namespace sift
