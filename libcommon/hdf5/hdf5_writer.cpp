#include "hdf5/hdf5_writer.h"

#include "util/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace bk {

PretrainWriter::PretrainWriter(const std::string& path, const PretrainWriterOptions& options)
    : file_(path, options.overwrite), options_(options) {
  if (options_.chunk_rows == 0) options_.chunk_rows = 256;
  if (options_.gzip_level < 0 || options_.gzip_level > 9) fail("{}: gzip level {} is not in 0..9", path, options_.gzip_level);
  const size_t n = options_.chunk_rows;
  const bool packed = options_.layout == Hdf5Layout::packed;
  const uint64_t S = packed ? static_cast<uint64_t>(options_.max_sequences) : 1;
  if (packed && (options_.max_sequences < 1 || options_.max_sequences > 127))
    fail("{}: the packed layout holds 1 to 127 samples per row, not {}", path, options_.max_sequences);
  if (!options_.masked) options_.max_predictions = 0;
  if (options_.layout != Hdf5Layout::varlength) {
    if (options_.seq_len < 1 || (options_.masked && options_.max_predictions < 1))
      fail("{}: the {} layout needs seq_len and max_predictions of at least 1", path, layout_name(options_.layout));
    const uint64_t L = options_.seq_len, P = options_.max_predictions;
    create_column(input_ids_, kDatasetInputIds, H5T_STD_I32LE, H5T_NATIVE_INT32, L);
    create_column(input_mask_, kDatasetInputMask, H5T_STD_I8LE, H5T_NATIVE_INT8, L);
    create_column(segment_ids_, kDatasetSegmentIds, H5T_STD_I8LE, H5T_NATIVE_INT8, L);
    if (options_.masked) {
      create_column(positions_, kDatasetMaskedPositions, H5T_STD_I32LE, H5T_NATIVE_INT32, P);
      create_column(masked_ids_, kDatasetMaskedIds, H5T_STD_I32LE, H5T_NATIVE_INT32, P);
    }
    ids_flat_.assign(n * L, 0);
    mask_flat_.assign(n * L, 0);
    segments_flat_.assign(n * L, 0);
    positions_flat_.assign(n * P, 0);
    masked_flat_.assign(n * P, 0);
    if (packed) {
      create_column(token_positions_, kDatasetPositions, H5T_STD_I32LE, H5T_NATIVE_INT32, L);
      create_column(next_sentence_positions_, kDatasetNextSentencePositions, H5T_STD_I32LE, H5T_NATIVE_INT32, S);
      create_column(next_sentence_weights_, kDatasetNextSentenceWeights, H5T_STD_I32LE, H5T_NATIVE_INT32, S);
      token_positions_flat_.assign(n * L, 0);
      nsp_positions_flat_.assign(n * S, 0);
      nsp_weights_flat_.assign(n * S, 0);
    }
  } else {
    vlen_i16_ = hid_type(H5Tvlen_create(H5T_NATIVE_INT16));
    vlen_i8_ = hid_type(H5Tvlen_create(H5T_NATIVE_INT8));
    vlen_file_i16_ = hid_type(H5Tvlen_create(H5T_STD_I16LE));
    vlen_file_i8_ = hid_type(H5Tvlen_create(H5T_STD_I8LE));
    create_column(input_ids_, kDatasetInputIds, vlen_file_i16_, vlen_i16_, 0);
    create_column(segment_ids_, kDatasetSegmentIds, vlen_file_i8_, vlen_i8_, 0);
    if (options_.masked) {
      create_column(positions_, kDatasetMaskedPositions, vlen_file_i16_, vlen_i16_, 0);
      create_column(masked_ids_, kDatasetMaskedIds, vlen_file_i16_, vlen_i16_, 0);
    }
    ids_rows_.resize(n);
    segments_rows_.resize(n);
    positions_rows_.resize(n);
    masked_rows_.resize(n);
  }
  create_column(next_sentence_, kDatasetNextSentence, H5T_STD_I8LE, H5T_NATIVE_INT8, packed ? S : 0);
  labels_.assign(n * S, 0);
  if (!options_.masked) {
    create_column(sample_ids_, kDatasetSampleIds, H5T_STD_I64LE, H5T_NATIVE_INT64, packed ? S : 0);
    sample_ids_flat_.assign(n * S, -1);
  }
  if (!options_.vocab_stamp.empty()) write_string_attribute(file_.file(), kAttributeVocab, options_.vocab_stamp, path);
}

PretrainWriter::~PretrainWriter() = default;

void PretrainWriter::create_column(Column& column, const char* name, hid_t file_type, hid_t memory_type,
                                   uint64_t width) {
  column.name = name;
  column.memory_type = memory_type;
  column.width = width;
  int rank = width > 0 ? 2 : 1;
  hsize_t dims[2] = {0, width}, max_dims[2] = {H5S_UNLIMITED, width};
  hsize_t chunk[2] = {options_.chunk_rows, width};
  Hid space = hid_space(H5Screate_simple(rank, dims, max_dims));
  Hid create = hid_plist(H5Pcreate(H5P_DATASET_CREATE));
  Hid access = hid_plist(H5Pcreate(H5P_DATASET_ACCESS));
  // No modification times in the object headers: the same samples give the same bytes on every run.
  bool ok = space.valid() && create.valid() && access.valid() && H5Pset_obj_track_times(create, false) >= 0 &&
            H5Pset_chunk(create, rank, chunk) >= 0 &&
            (options_.gzip_level == 0 || H5Pset_deflate(create, options_.gzip_level) >= 0) &&
            // Rows arrive in whole chunks, so HDF5's chunk cache would only hold memory (one per dataset and
            // file, which adds up with many shards open at once); writes go straight to disk instead.
            H5Pset_chunk_cache(access, H5D_CHUNK_CACHE_NSLOTS_DEFAULT, 0, H5D_CHUNK_CACHE_W0_DEFAULT) >= 0;
  if (ok) column.dataset = hid_dataset(H5Dcreate2(file_.file(), name, file_type, space, H5P_DEFAULT, create, access));
  if (!ok || !column.dataset.valid())
    fail("{}: cannot create dataset {}: {}", file_.path(), name, hdf5_last_error());
}

void PretrainWriter::row_error(const std::string& what) const {
  fail("{}: row {}: {}", file_.path(), rows(), what);
}

void PretrainWriter::append(const PretrainSample& s) {
  std::string problem = check_sample(s);
  if (!problem.empty()) row_error(problem);
  const size_t r = buffered_;
  const bool packed = options_.layout == Hdf5Layout::packed;
  if (!packed && s.sequences() > 1)
    row_error(fmt::format("a row of {} packed samples cannot be written in the {} layout", s.sequences(),
                          layout_name(options_.layout)));
  if (!packed) labels_[r] = static_cast<int8_t>(s.next_sentence_label);
  if (!options_.masked) {
    if (!s.masked_lm_positions.empty()) row_error("an unmasked file takes samples without predictions");
    if (packed ? !s.unmasked() || (s.sequences() > 1 && s.pack_sample_ids.size() != s.sequences())
               : s.sample_id < 0)
      row_error("an unmasked file needs each sample's sample_id");
    if (!packed) sample_ids_flat_[r] = s.sample_id;
  }
  if (options_.layout != Hdf5Layout::varlength) {
    const size_t L = options_.seq_len, P = options_.max_predictions;
    if (s.length() > L) row_error(fmt::format("{} tokens do not fit the sequence length {}", s.length(), L));
    if (s.masked_lm_positions.size() > P)
      row_error(fmt::format("{} predictions do not fit max_predictions {}", s.masked_lm_positions.size(), P));
    // Padding is 0 everywhere, as NVIDIA's loader expects (a 0 position ends the predictions).
    std::fill(&ids_flat_[r * L], &ids_flat_[r * L] + L, 0);
    std::fill(&mask_flat_[r * L], &mask_flat_[r * L] + L, 0);
    std::fill(&segments_flat_[r * L], &segments_flat_[r * L] + L, 0);
    std::fill_n(positions_flat_.data() + r * P, P, 0);  // P is 0 for an unmasked file: nothing
    std::fill_n(masked_flat_.data() + r * P, P, 0);
    for (size_t j = 0; j < s.length(); ++j) {
      ids_flat_[r * L + j] = s.input_ids[j];
      mask_flat_[r * L + j] = 1;
      segments_flat_[r * L + j] = static_cast<int8_t>(s.segment_ids[j]);
    }
    for (size_t j = 0; j < s.masked_lm_positions.size(); ++j) {
      positions_flat_[r * P + j] = s.masked_lm_positions[j];
      masked_flat_[r * P + j] = s.masked_lm_ids[j];
    }
    if (packed) append_pack(s, r);
  } else {
    auto to_i16 = [&](const std::vector<int32_t>& from, std::vector<int16_t>& to, const char* dataset) {
      to.resize(from.size());
      for (size_t j = 0; j < from.size(); ++j) {
        if (from[j] > INT16_MAX) row_error(fmt::format("{}: value {} does not fit the varlength layout's int16", dataset, from[j]));
        to[j] = static_cast<int16_t>(from[j]);
      }
    };
    to_i16(s.input_ids, ids_rows_[r], kDatasetInputIds);
    if (options_.masked) {
      to_i16(s.masked_lm_positions, positions_rows_[r], kDatasetMaskedPositions);
      to_i16(s.masked_lm_ids, masked_rows_[r], kDatasetMaskedIds);
    }
    segments_rows_[r].assign(s.segment_ids.begin(), s.segment_ids.end());
  }
  if (++buffered_ == options_.chunk_rows) flush();
}

// The packed layout's columns for row r: input_mask numbers the samples, positions restart with each one, and each
// sample's [CLS] position, label and weight fill a slot of next_sentence_*.
void PretrainWriter::append_pack(const PretrainSample& s, size_t r) {
  const size_t L = options_.seq_len, S = options_.max_sequences;
  if (s.sequences() > S) row_error(fmt::format("{} packed samples do not fit the {} slots of a row", s.sequences(), S));
  std::fill(&token_positions_flat_[r * L], &token_positions_flat_[r * L] + L, 0);
  std::fill(&nsp_positions_flat_[r * S], &nsp_positions_flat_[r * S] + S, 0);
  std::fill(&nsp_weights_flat_[r * S], &nsp_weights_flat_[r * S] + S, 0);
  std::fill(&labels_[r * S], &labels_[r * S] + S, 0);
  const std::vector<int32_t> one = {static_cast<int32_t>(s.length())};
  const std::vector<int32_t>& lengths = s.pack_lengths.empty() ? one : s.pack_lengths;
  size_t start = 0;
  for (size_t k = 0; k < lengths.size(); ++k) {
    for (size_t j = 0; j < static_cast<size_t>(lengths[k]); ++j) {
      mask_flat_[r * L + start + j] = static_cast<int8_t>(k + 1);
      token_positions_flat_[r * L + start + j] = static_cast<int32_t>(j);
    }
    nsp_positions_flat_[r * S + k] = static_cast<int32_t>(start);
    nsp_weights_flat_[r * S + k] = 1;
    labels_[r * S + k] = static_cast<int8_t>(s.pack_labels.empty() ? s.next_sentence_label : s.pack_labels[k]);
    start += static_cast<size_t>(lengths[k]);
  }
  if (!options_.masked) {
    std::fill(&sample_ids_flat_[r * S], &sample_ids_flat_[r * S] + S, -1);
    if (s.pack_sample_ids.empty()) sample_ids_flat_[r * S] = s.sample_id;
    for (size_t k = 0; k < s.pack_sample_ids.size(); ++k) sample_ids_flat_[r * S + k] = s.pack_sample_ids[k];
  }
}

void PretrainWriter::write_fixed(Column& column, const void* data) {
  hdf5_quiet();  // HDF5's printing is off per thread; a writer may be fed from another thread than its creator's
  const hsize_t total = written_ + buffered_;
  int rank = column.width > 0 ? 2 : 1;
  hsize_t new_dims[2] = {total, column.width}, start[2] = {written_, 0}, count[2] = {buffered_, column.width};
  bool ok = H5Dset_extent(column.dataset, new_dims) >= 0;
  // A full chunk of a fixed-width column (memory and file types have the same bytes on this little-endian target):
  // deflated by the compressor's workers, stored raw later on this thread, in order.
  if (ok && options_.compressor && options_.gzip_level > 0 && buffered_ == options_.chunk_rows &&
      options_.layout != Hdf5Layout::varlength) {
    const size_t bytes = buffered_ * std::max<uint64_t>(column.width, 1) * H5Tget_size(column.memory_type);
    const auto* first = static_cast<const uint8_t*>(data);
    const hid_t dataset = column.dataset;
    const std::string where = fmt::format("{}: dataset {}: cannot write rows {} to {}", file_.path(), column.name,
                                          written_, total - 1);
    const std::array<hsize_t, 2> offset = {written_, 0};
    options_.compressor->submit(std::vector<uint8_t>(first, first + bytes), options_.gzip_level,
                                [dataset, offset, where](const std::vector<uint8_t>& compressed) {
                                  hdf5_quiet();
                                  if (H5Dwrite_chunk(dataset, H5P_DEFAULT, 0, offset.data(), compressed.size(),
                                                     compressed.data()) < 0)
                                    fail("{}: {}", where, hdf5_last_error());
                                });
    return;
  }
  Hid file_space = hid_space(ok ? H5Dget_space(column.dataset) : H5I_INVALID_HID);
  Hid memory = hid_space(H5Screate_simple(rank, count, nullptr));
  ok = ok && file_space.valid() && memory.valid() &&
       H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr) >= 0 &&
       H5Dwrite(column.dataset, column.memory_type, memory, file_space, H5P_DEFAULT, data) >= 0;
  if (!ok) fail("{}: dataset {}: cannot write rows {} to {}: {}", file_.path(), column.name, written_, total - 1, hdf5_last_error());
}

void PretrainWriter::flush() {
  if (buffered_ == 0) return;
  if (options_.layout != Hdf5Layout::varlength) {
    write_fixed(input_ids_, ids_flat_.data());
    write_fixed(input_mask_, mask_flat_.data());
    write_fixed(segment_ids_, segments_flat_.data());
    if (options_.masked) {
      write_fixed(positions_, positions_flat_.data());
      write_fixed(masked_ids_, masked_flat_.data());
    }
    if (options_.layout == Hdf5Layout::packed) {
      write_fixed(token_positions_, token_positions_flat_.data());
      write_fixed(next_sentence_positions_, nsp_positions_flat_.data());
      write_fixed(next_sentence_weights_, nsp_weights_flat_.data());
    }
  } else {
    std::vector<hvl_t> handles(buffered_);
    auto write_rows = [&](Column& column, auto& rows) {
      for (size_t r = 0; r < buffered_; ++r) handles[r] = hvl_t{rows[r].size(), rows[r].data()};
      write_fixed(column, handles.data());
    };
    write_rows(input_ids_, ids_rows_);
    write_rows(segment_ids_, segments_rows_);
    if (options_.masked) {
      write_rows(positions_, positions_rows_);
      write_rows(masked_ids_, masked_rows_);
    }
  }
  write_fixed(next_sentence_, labels_.data());
  if (!options_.masked) write_fixed(sample_ids_, sample_ids_flat_.data());
  written_ += buffered_;
  buffered_ = 0;
}

void PretrainWriter::commit() {
  // The pending chunks first (every writer's, in submission order), then this writer's last partial chunk through
  // HDF5's own filter: the order of the stores is the one HDF5 alone would have written them in.
  if (options_.compressor) options_.compressor->flush();
  flush();
  for (Column* column : {&input_ids_, &input_mask_, &segment_ids_, &positions_, &masked_ids_, &next_sentence_,
                         &token_positions_, &next_sentence_positions_, &next_sentence_weights_, &sample_ids_})
    column->dataset.close();
  file_.commit();
}

}  // namespace bk
