#include "hdf5/hdf5_reader.h"

#include "util/error.h"
#include "util/printable.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bk {

namespace {

std::string type_class_name(hid_t type) {
  switch (H5Tget_class(type)) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float";
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    case H5T_ENUM: return "enum";
    case H5T_VLEN: return "variable-length";
    case H5T_ARRAY: return "array";
    case H5T_OPAQUE: return "opaque";
    default: return "non-numeric";
  }
}

herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->push_back(name);
  return 0;
}

// The most values a variable-length row may claim: 128 times BERT's longest sequence, and what tfrecord2hdf5
// accepts as an inferred width.
constexpr uint64_t kMaxVlenValues = 65536;
// The largest chunk (in memory) the reader lets HDF5 allocate.
constexpr uint64_t kMaxChunkBytes = uint64_t{256} << 20;

// HDF5 converts a variable-length row by first allocating a buffer for its whole length as the file states it,
// so one damaged length (a u32: up to 2^32 values) costs gigabytes before the read fails (a 34 KB file made bin4
// take 2.1 GB). So the lengths of the rows about to be read are read raw and checked first, where the storage
// allows it: contiguous, or chunked without filters or with deflate alone (what bertkit, h5py and MLPerf's
// scripts write). On disk each row is a u32 length (little-endian) and a global heap ID (address + u32 index).
// Any storage this cannot read raw is left to HDF5, which reports its own errors.
void check_vlen_lengths(const std::string& path, const char* name, hid_t dataset, uint64_t first, uint64_t count) {
  Hid file(H5Iget_file_id(dataset), H5Fclose);
  if (!file.valid()) return;
  Hid file_plist = hid_plist(H5Fget_create_plist(file));
  size_t sizeof_addr = 0, sizeof_size = 0;
  if (!file_plist.valid() || H5Pget_sizes(file_plist, &sizeof_addr, &sizeof_size) < 0 || sizeof_addr > 16) return;
  const uint64_t width = 4 + sizeof_addr + 4;
  Hid create = hid_plist(H5Dget_create_plist(dataset));
  if (!create.valid()) return;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close_fd{fd};
  auto read_at = [&](std::string& out, uint64_t size, uint64_t offset) {
    out.resize(size);
    return ::pread(fd, out.data(), size, static_cast<off_t>(offset)) == static_cast<ssize_t>(size);
  };
  // rows: `bytes` holds the descriptors of rows from row0 on.
  auto check = [&](const std::string& bytes, uint64_t row0) {
    for (uint64_t row = std::max(row0, first); row < first + count && (row - row0 + 1) * width <= bytes.size(); ++row) {
      const auto* b = reinterpret_cast<const unsigned char*>(bytes.data() + (row - row0) * width);
      const uint64_t length = uint64_t{b[0]} | uint64_t{b[1]} << 8 | uint64_t{b[2]} << 16 | uint64_t{b[3]} << 24;
      if (length > kMaxVlenValues)
        fail("{}: dataset {}: row {} claims {} values, more than the {} a row may hold (a damaged file?)", path, name,
             row, length, kMaxVlenValues);
    }
  };
  std::string raw;
  const H5D_layout_t layout = H5Pget_layout(create);
  if (layout == H5D_CONTIGUOUS) {
    const haddr_t offset = H5Dget_offset(dataset);
    if (offset != HADDR_UNDEF && read_at(raw, count * width, offset + first * width)) check(raw, first);
  } else if (layout == H5D_CHUNKED) {
    hsize_t chunk = 0;
    if (H5Pget_chunk(create, 1, &chunk) != 1 || chunk == 0 || chunk * width > (uint64_t{64} << 20)) return;
    bool deflate = false;
    for (int i = 0, n = H5Pget_nfilters(create); i < n; ++i) {
      unsigned flags = 0, config = 0;
      size_t values = 0;
      if (H5Pget_filter2(create, static_cast<unsigned>(i), &flags, &values, nullptr, 0, nullptr, &config) !=
          H5Z_FILTER_DEFLATE)
        return;
      deflate = true;
    }
    std::string rows;
    for (uint64_t c = first / chunk * chunk; c < first + count; c += chunk) {
      hsize_t coord[1] = {c};
      unsigned mask = 0;
      haddr_t address = HADDR_UNDEF;
      hsize_t size = 0;
      if (H5Dget_chunk_info_by_coord(dataset, coord, &mask, &address, &size) < 0 || address == HADDR_UNDEF ||
          size > 2 * chunk * width + 1024 || !read_at(raw, size, address))
        continue;
      if (deflate && !(mask & 1)) {
        rows.resize(chunk * width);
        uLongf out = static_cast<uLongf>(rows.size());
        if (::uncompress(reinterpret_cast<Bytef*>(rows.data()), &out, reinterpret_cast<const Bytef*>(raw.data()),
                         static_cast<uLong>(raw.size())) != Z_OK)
          continue;
        rows.resize(out);
        check(rows, c);
      } else {
        check(raw, c);
      }
    }
  }
}

std::vector<std::string> root_members(hid_t file) {
  std::vector<std::string> names;
  hsize_t index = 0;
  H5Literate(file, H5_INDEX_NAME, H5_ITER_NATIVE, &index, collect_name, &names);
  return names;
}

int32_t narrow(int64_t v) {
  // Out-of-range values become -1, which check_sample (or the caller) rejects with the dataset name.
  return v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max() ? -1
                                                                                               : static_cast<int32_t>(v);
}

// A row's P prediction slots into the sample; as NVIDIA's loader reads them, the first 0 position ends the list
// (position 0 is [CLS], never masked).
void take_predictions(const int64_t* positions, const int64_t* masked, uint64_t slots, PretrainSample& s) {
  uint64_t predictions = 0;
  while (predictions < slots && positions[predictions] != 0) ++predictions;
  s.masked_lm_positions.resize(predictions);
  s.masked_lm_ids.resize(predictions);
  for (uint64_t j = 0; j < predictions; ++j) {
    s.masked_lm_positions[j] = narrow(positions[j]);
    s.masked_lm_ids[j] = narrow(masked[j]);
  }
}

}  // namespace

PretrainReader::PretrainReader(const std::string& path) : path_(path) {
  hdf5_quiet();
  if (path == "-" || path.empty()) fail("HDF5 needs random access; read from a file, not stdin");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail("{}: cannot open: {}", path, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) fail("{}: is a directory", path);
  if (::access(path.c_str(), R_OK) != 0) fail("{}: cannot open: {}", path, std::strerror(errno));
  if (H5Fis_hdf5(path.c_str()) <= 0) fail("{}: not an HDF5 file", path);
  file_ = hid_file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file_.valid()) fail("{}: cannot open HDF5 file (damaged or truncated?): {}", path, hdf5_last_error());

  const char* nvidia_names[] = {kDatasetInputIds,        kDatasetInputMask,  kDatasetSegmentIds,
                                kDatasetMaskedPositions, kDatasetMaskedIds, kDatasetNextSentence};
  auto exists = [&](const char* name) { return H5Lexists(file_, name, H5P_DEFAULT) > 0; };
  if (exists(kDatasetInputIds)) {
    Hid dataset = hid_dataset(H5Dopen2(file_, kDatasetInputIds, H5P_DEFAULT));
    Hid type = hid_type(dataset.valid() ? H5Dget_type(dataset) : H5I_INVALID_HID);
    if (type.valid() && H5Tget_class(type) == H5T_VLEN) layout_ = Hdf5Layout::varlength;
    else if (exists(kDatasetNextSentencePositions)) layout_ = Hdf5Layout::packed;
  }
  // Unmasked instances: both prediction datasets absent, sample_ids there instead. A file with both would be read
  // one way while its writer meant the other (masks fixed, or ids ignored): neither is guessed.
  masked_ = exists(kDatasetMaskedPositions) || exists(kDatasetMaskedIds) || !exists(kDatasetSampleIds);
  if (masked_ && exists(kDatasetSampleIds))
    fail("{}: holds both sample_ids (unmasked instances, masked by the loader) and masked_lm_* (fixed masks); a "
         "pretraining file has one or the other: remake it with mkpretrain", path);
  std::vector<std::string> missing;
  for (const char* name : nvidia_names) {
    const bool prediction = name == kDatasetMaskedPositions || name == kDatasetMaskedIds;
    if (!(layout_ == Hdf5Layout::varlength && name == kDatasetInputMask) && !(prediction && !masked_) && !exists(name))
      missing.push_back(name);
  }
  if (!missing.empty()) {
    // The names come from the file: escaped and cut (util/printable.h), at most 20 of them, so that a damaged or
    // hostile file cannot put binary bytes or megabytes into the one-line error.
    const std::vector<std::string> members = root_members(file_);
    std::string found;
    for (size_t i = 0; i < members.size() && i < 20; ++i)
      found += (i ? ", " : "") + (members[i].empty() ? std::string("\"\"") : printable_excerpt(members[i], 40));
    if (members.size() > 20) found += fmt::format(" and {} more", members.size() - 20);
    fail("{}: not a BERT pretraining HDF5 file: missing dataset{} {} (found at the root: {})", path,
         missing.size() > 1 ? "s" : "", fmt::join(missing, ", "), found.empty() ? "nothing" : found);
  }

  vocab_stamp_ = read_string_attribute(file_, kAttributeVocab).value_or("");
  bool vlen = layout_ == Hdf5Layout::varlength;
  input_ids_ = open_dataset(kDatasetInputIds, vlen, true);
  segment_ids_ = open_dataset(kDatasetSegmentIds, vlen, true);
  if (masked_) {
    positions_ = open_dataset(kDatasetMaskedPositions, vlen, true);
    masked_ids_ = open_dataset(kDatasetMaskedIds, vlen, true);
  } else {
    sample_ids_ = open_dataset(kDatasetSampleIds, false, layout_ == Hdf5Layout::packed);
    // Read as int64, an unsigned 64-bit id of 2^63 or more would come back clipped to 2^63-1 (read_sample_id).
    Hid type = hid_type(H5Dget_type(sample_ids_.id));
    sample_ids_clipped_ = type.valid() && H5Tget_sign(type) == H5T_SGN_NONE && H5Tget_size(type) >= 8;
  }
  next_sentence_ = open_dataset(kDatasetNextSentence, false, true);
  if (!vlen) input_mask_ = open_dataset(kDatasetInputMask, false, true);
  if (layout_ == Hdf5Layout::packed) {
    for (const char* name : {kDatasetPositions, kDatasetNextSentenceWeights})
      if (!exists(name)) fail("{}: a packed file (it has next_sentence_positions) without dataset {}", path, name);
    token_positions_ = open_dataset(kDatasetPositions, false, true);
    next_sentence_positions_ = open_dataset(kDatasetNextSentencePositions, false, true);
    next_sentence_weights_ = open_dataset(kDatasetNextSentenceWeights, false, true);
  }

  auto shape_error = [&](const Dataset& d, const Dataset& like) {
    fail("{}: dataset {} has {} columns but {} has {}", path, d.name, d.width, like.name, like.width);
  };
  if (!vlen) {
    if (input_ids_.width == 0) fail("{}: dataset input_ids must be 2-D [rows, seq_len]", path);
    if (masked_ && positions_.width == 0)
      fail("{}: dataset masked_lm_positions must be 2-D [rows, max_predictions]", path);
    if (input_mask_.width != input_ids_.width) shape_error(input_mask_, input_ids_);
    if (segment_ids_.width != input_ids_.width) shape_error(segment_ids_, input_ids_);
    if (masked_ids_.width != positions_.width) shape_error(masked_ids_, positions_);
    seq_len_ = static_cast<int>(input_ids_.width);
    max_pred_ = static_cast<int>(positions_.width);
  }
  if (layout_ == Hdf5Layout::packed) {
    if (token_positions_.width != input_ids_.width) shape_error(token_positions_, input_ids_);
    if (next_sentence_positions_.width == 0 || next_sentence_positions_.width > 127)
      fail("{}: dataset next_sentence_positions must be 2-D [rows, 1..127 samples per row]", path);
    if (next_sentence_.width != next_sentence_positions_.width) shape_error(next_sentence_, next_sentence_positions_);
    if (next_sentence_weights_.width != next_sentence_positions_.width)
      shape_error(next_sentence_weights_, next_sentence_positions_);
    if (!masked_ && sample_ids_.width != next_sentence_positions_.width)
      shape_error(sample_ids_, next_sentence_positions_);
    max_seqs_ = static_cast<int>(next_sentence_positions_.width);
  } else if (next_sentence_.width > 1) {
    fail("{}: dataset next_sentence_labels must be [rows] or [rows, 1]", path);
  }
}

PretrainReader::Dataset PretrainReader::open_dataset(const char* name, bool vlen, bool two_d_ok) {
  Dataset d;
  d.name = name;
  d.id = hid_dataset(H5Dopen2(file_, name, H5P_DEFAULT));
  if (!d.id.valid()) fail("{}: {} is not a dataset: {}", path_, name, hdf5_last_error());
  Hid type = hid_type(H5Dget_type(d.id));
  if (vlen) {
    Hid base = hid_type(H5Tget_class(type) == H5T_VLEN ? H5Tget_super(type) : H5I_INVALID_HID);
    if (!base.valid() || H5Tget_class(base) != H5T_INTEGER)
      fail("{}: dataset {} has type {}; the varlength layout needs variable-length integers", path_, name,
           base.valid() ? "variable-length " + type_class_name(base) : type_class_name(type));
  } else if (H5Tget_class(type) != H5T_INTEGER) {
    fail("{}: dataset {} has type {}; it must hold integers", path_, name, type_class_name(type));
  }
  Hid space = hid_space(H5Dget_space(d.id));
  int rank = H5Sget_simple_extent_ndims(space);
  hsize_t dims[2] = {0, 0};
  if (rank < 1 || rank > 2 || (rank == 2 && (!two_d_ok || vlen)))
    fail("{}: dataset {} has {} dimensions, expected {}", path_, name, rank,
         vlen || !two_d_ok ? "1" : (layout_ == Hdf5Layout::packed ? "2" : "1 or 2"));
  H5Sget_simple_extent_dims(space, dims, nullptr);
  if (rank == 2) d.width = dims[1];
  if (name == kDatasetInputIds) rows_ = dims[0];
  else if (dims[0] != rows_) fail("{}: dataset {} has {} rows but input_ids has {}", path_, name, dims[0], rows_);
  // HDF5 allocates a whole chunk to read any row of it, so a damaged chunk shape would cost that much memory
  // on the first read (fuzz_hdf5_reader: gigabytes). Writers chunk far below this: bertkit 64+ rows, h5py 1 MB.
  Hid create = hid_plist(H5Dget_create_plist(d.id));
  hsize_t chunk[2] = {0, 0};
  if (create.valid() && H5Pget_layout(create) == H5D_CHUNKED && H5Pget_chunk(create, 2, chunk) == rank) {
    const size_t item = vlen ? sizeof(hvl_t) : std::max<size_t>(H5Tget_size(type), 1);
    const double bytes = static_cast<double>(chunk[0]) * static_cast<double>(rank == 2 ? chunk[1] : 1) * item;
    if (bytes > static_cast<double>(kMaxChunkBytes))
      fail("{}: dataset {} has chunks of {:.0f} bytes, more than the {} a reader takes (a damaged file?)", path_,
           name, bytes, kMaxChunkBytes);
  }
  return d;
}

std::vector<int64_t> PretrainReader::read_fixed(const Dataset& d, uint64_t first, uint64_t count) {
  hdf5_quiet();  // reads may come from another thread than the constructor's (a prefetch thread)
  uint64_t width = d.width == 0 ? 1 : d.width;
  std::vector<int64_t> values(count * width);
  if (count == 0 || width == 0) return values;
  Hid file_space = hid_space(H5Dget_space(d.id));
  hsize_t start[2] = {first, 0}, extent[2] = {count, width};
  int rank = d.width == 0 ? 1 : 2;
  Hid memory = hid_space(H5Screate_simple(rank, extent, nullptr));
  if (H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, extent, nullptr) < 0 ||
      H5Dread(d.id, H5T_NATIVE_INT64, memory, file_space, H5P_DEFAULT, values.data()) < 0)
    fail("{}: dataset {}: cannot read rows {} to {}: {}", path_, d.name, first, first + count - 1, hdf5_last_error());
  return values;
}

std::vector<std::vector<int64_t>> PretrainReader::read_vlen(const Dataset& d, uint64_t first, uint64_t count) {
  hdf5_quiet();
  std::vector<std::vector<int64_t>> rows(count);
  if (count == 0) return rows;
  Hid file_space = hid_space(H5Dget_space(d.id));
  hsize_t start[1] = {first}, extent[1] = {count};
  Hid memory = hid_space(H5Screate_simple(1, extent, nullptr));
  Hid memory_type = hid_type(H5Tvlen_create(H5T_NATIVE_INT64));
  std::vector<hvl_t> buffer(count);
  check_vlen_lengths(path_, d.name, d.id, first, count);
  if (H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, extent, nullptr) < 0 ||
      H5Dread(d.id, memory_type, memory, file_space, H5P_DEFAULT, buffer.data()) < 0) {
    const std::string why = hdf5_last_error();
    // A read that failed part way may have filled some rows: free those (the rest are still {0, null}, which
    // reclaim skips) before the error leaves, so a caller that goes on (a long-lived loader) does not leak them.
    H5Dvlen_reclaim(memory_type, memory, H5P_DEFAULT, buffer.data());
    fail("{}: dataset {}: cannot read rows {} to {}: {}", path_, d.name, first, first + count - 1, why);
  }
  for (uint64_t i = 0; i < count; ++i) {
    const auto* p = static_cast<const int64_t*>(buffer[i].p);
    rows[i].assign(p, p + buffer[i].len);
  }
  H5Dvlen_reclaim(memory_type, memory, H5P_DEFAULT, buffer.data());
  return rows;
}

void PretrainReader::row_error(uint64_t row, const std::string& what) const {
  fail("{}: row {}: {}", path_, row, what);
}

bool PretrainReader::read_block(std::vector<PretrainSample>& out, size_t max_rows) {
  out.clear();
  if (next_row_ >= rows_ || max_rows == 0) return false;
  uint64_t count = std::min<uint64_t>(max_rows, rows_ - next_row_);
  out.resize(count);
  if (layout_ == Hdf5Layout::nvidia) read_nvidia(out, next_row_, count);
  else if (layout_ == Hdf5Layout::packed) read_packed(out, next_row_, count);
  else read_varlength(out, next_row_, count);
  for (uint64_t i = 0; i < count; ++i) {
    std::string problem = check_sample(out[i]);
    if (!problem.empty()) row_error(next_row_ + i, problem);
  }
  next_row_ += count;
  return true;
}

void PretrainReader::read_nvidia(std::vector<PretrainSample>& out, uint64_t first, uint64_t count) {
  const uint64_t L = input_ids_.width, P = positions_.width;
  auto ids = read_fixed(input_ids_, first, count);
  auto mask = read_fixed(input_mask_, first, count);
  auto segments = read_fixed(segment_ids_, first, count);
  auto positions = masked_ ? read_fixed(positions_, first, count) : std::vector<int64_t>();
  auto masked = masked_ ? read_fixed(masked_ids_, first, count) : std::vector<int64_t>();
  auto labels = read_fixed(next_sentence_, first, count);
  for (uint64_t r = 0; r < count; ++r) {
    const int64_t* m = &mask[r * L];
    // input_mask must be a run of 1s then 0s: the real tokens come first, padding after.
    uint64_t length = 0;
    while (length < L && m[length] == 1) ++length;
    for (uint64_t j = length; j < L; ++j)
      if (m[j] != 0)
        row_error(first + r, fmt::format("input_mask: value {} at column {} (expected 1s followed by 0s)", m[j], j));
    PretrainSample& s = out[r];
    s.input_ids.resize(length);
    s.segment_ids.resize(length);
    for (uint64_t j = 0; j < length; ++j) {
      s.input_ids[j] = narrow(ids[r * L + j]);
      s.segment_ids[j] = narrow(segments[r * L + j]);
    }
    if (masked_) take_predictions(&positions[r * P], &masked[r * P], P, s);
    s.next_sentence_label = narrow(labels[r]);
  }
  if (!masked_) read_sample_ids(out, first, count);
}

void PretrainReader::read_sample_ids(std::vector<PretrainSample>& out, uint64_t first, uint64_t count) {
  const auto ids = read_fixed(sample_ids_, first, count);
  for (uint64_t r = 0; r < count; ++r) out[r].sample_id = checked_sample_id(first + r, ids[r]);
}

int64_t PretrainReader::checked_sample_id(uint64_t row, int64_t id) const {
  if (id < 0) row_error(row, fmt::format("sample_ids: {} is negative", id));
  if (sample_ids_clipped_ && id == std::numeric_limits<int64_t>::max())
    row_error(row, "sample_ids: an unsigned id of 2^63 or more, beyond the int64 ids hold (bertkit-formats(5))");
  return id;
}

int64_t PretrainReader::sample_id_at(uint64_t row) {
  if (masked_ || layout_ == Hdf5Layout::packed) return -1;
  return checked_sample_id(row, read_fixed(sample_ids_, row, 1).front());
}

void PretrainReader::read_varlength(std::vector<PretrainSample>& out, uint64_t first, uint64_t count) {
  auto ids = read_vlen(input_ids_, first, count);
  auto segments = read_vlen(segment_ids_, first, count);
  auto positions = masked_ ? read_vlen(positions_, first, count) : std::vector<std::vector<int64_t>>(count);
  auto masked = masked_ ? read_vlen(masked_ids_, first, count) : std::vector<std::vector<int64_t>>(count);
  auto labels = read_fixed(next_sentence_, first, count);
  auto copy = [](const std::vector<int64_t>& from, std::vector<int32_t>& to) {
    to.resize(from.size());
    for (size_t j = 0; j < from.size(); ++j) to[j] = narrow(from[j]);
  };
  for (uint64_t r = 0; r < count; ++r) {
    PretrainSample& s = out[r];
    copy(ids[r], s.input_ids);
    copy(segments[r], s.segment_ids);
    copy(positions[r], s.masked_lm_positions);
    copy(masked[r], s.masked_lm_ids);
    s.next_sentence_label = narrow(labels[r]);
  }
  if (!masked_) read_sample_ids(out, first, count);
}

void PretrainReader::read_packed(std::vector<PretrainSample>& out, uint64_t first, uint64_t count) {
  const uint64_t L = input_ids_.width, P = positions_.width, S = next_sentence_positions_.width;
  auto ids = read_fixed(input_ids_, first, count);
  auto mask = read_fixed(input_mask_, first, count);
  auto segments = read_fixed(segment_ids_, first, count);
  auto token_positions = read_fixed(token_positions_, first, count);
  auto positions = masked_ ? read_fixed(positions_, first, count) : std::vector<int64_t>();
  auto masked = masked_ ? read_fixed(masked_ids_, first, count) : std::vector<int64_t>();
  auto sample_ids = masked_ ? std::vector<int64_t>() : read_fixed(sample_ids_, first, count);
  auto nsp_positions = read_fixed(next_sentence_positions_, first, count);
  auto labels = read_fixed(next_sentence_, first, count);
  auto weights = read_fixed(next_sentence_weights_, first, count);
  for (uint64_t r = 0; r < count; ++r) {
    const uint64_t row = first + r;
    const int64_t* m = &mask[r * L];
    PretrainSample& s = out[r];
    // input_mask numbers the samples 1, 2, ... in runs, then 0s: the samples are back to back, padding after.
    uint64_t length = 0;
    std::vector<uint64_t> starts;
    for (; length < L && m[length] != 0; ++length) {
      const auto expected = static_cast<int64_t>(starts.size());
      if (m[length] == expected + 1) starts.push_back(length);
      else if (m[length] != expected || expected == 0)
        row_error(row, fmt::format("input_mask: value {} at column {} (expected the sample index {} or {})", m[length],
                                   length, expected, expected + 1));
    }
    for (uint64_t j = length; j < L; ++j)
      if (m[j] != 0) row_error(row, fmt::format("input_mask: value {} at column {} after the padding began", m[j], j));
    if (starts.size() > S)
      row_error(row, fmt::format("input_mask: {} samples in a row of at most {}", starts.size(), S));
    s.input_ids.resize(length);
    s.segment_ids.resize(length);
    s.pack_lengths.clear();
    s.pack_labels.clear();
    s.pack_sample_ids.clear();
    for (size_t k = 0; k < starts.size(); ++k) {
      const uint64_t end = k + 1 < starts.size() ? starts[k + 1] : length;
      s.pack_lengths.push_back(static_cast<int32_t>(end - starts[k]));
      for (uint64_t j = starts[k]; j < end; ++j) {
        if (token_positions[r * L + j] != static_cast<int64_t>(j - starts[k]))
          row_error(row, fmt::format("positions: value {} at column {} (expected {}: positions restart at 0 with each "
                                     "packed sample)", token_positions[r * L + j], j, j - starts[k]));
        s.input_ids[j] = narrow(ids[r * L + j]);
        s.segment_ids[j] = narrow(segments[r * L + j]);
      }
    }
    for (uint64_t k = 0; k < S; ++k) {
      const int64_t weight = weights[r * S + k];
      if (weight != (k < starts.size() ? 1 : 0))
        row_error(row, fmt::format("next_sentence_weights: value {} in slot {} of a row of {} samples", weight, k,
                                   starts.size()));
      if (!masked_ && k >= starts.size() && sample_ids[r * S + k] != -1)
        row_error(row, fmt::format("sample_ids: value {} in slot {} of a row of {} samples (expected -1)",
                                   sample_ids[r * S + k], k, starts.size()));
      if (k >= starts.size()) continue;
      if (nsp_positions[r * S + k] != static_cast<int64_t>(starts[k]))
        row_error(row, fmt::format("next_sentence_positions: value {} in slot {} (sample {} starts at column {})",
                                   nsp_positions[r * S + k], k, k + 1, starts[k]));
      s.pack_labels.push_back(narrow(labels[r * S + k]));
      if (!masked_) s.pack_sample_ids.push_back(checked_sample_id(row, sample_ids[r * S + k]));
    }
    if (masked_) take_predictions(&positions[r * P], &masked[r * P], P, s);
    s.next_sentence_label = s.pack_labels.empty() ? 0 : s.pack_labels.front();
  }
}

}  // namespace bk
