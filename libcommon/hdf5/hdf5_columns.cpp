#include "hdf5/hdf5_columns.h"

#include "util/error.h"

#include <cstring>

namespace bk {

Hdf5ColumnWriter::Hdf5ColumnWriter(const std::string& path, std::vector<ColumnSpec> columns, int gzip_level,
                                   bool overwrite, size_t chunk_rows)
    : file_(path, overwrite), specs_(std::move(columns)), chunk_rows_(chunk_rows) {
  for (const auto& spec : specs_) {
    const int rank = spec.width == 1 ? 1 : 2;
    hsize_t dims[2] = {0, spec.width}, max_dims[2] = {H5S_UNLIMITED, spec.width};
    hsize_t chunk[2] = {chunk_rows_, spec.width};
    Hid space = hid_space(H5Screate_simple(rank, dims, max_dims));
    Hid create = hid_plist(H5Pcreate(H5P_DATASET_CREATE));
    bool ok = space.valid() && create.valid() && H5Pset_obj_track_times(create, false) >= 0 &&
              H5Pset_chunk(create, rank, chunk) >= 0 &&
              (gzip_level == 0 || H5Pset_deflate(create, static_cast<unsigned>(gzip_level)) >= 0);
    hid_t type = spec.kind == Kind::int64 ? H5T_STD_I64LE : H5T_IEEE_F32LE;
    Hid dataset;
    if (ok) dataset = hid_dataset(H5Dcreate2(file_.file(), spec.name.c_str(), type, space, H5P_DEFAULT, create, H5P_DEFAULT));
    if (!dataset.valid()) fail("{}: cannot create dataset {}: {}", path, spec.name, hdf5_last_error());
    datasets_.push_back(std::move(dataset));
    int_buffers_.emplace_back(spec.kind == Kind::int64 ? chunk_rows_ * spec.width : 0);
    float_buffers_.emplace_back(spec.kind == Kind::float32 ? chunk_rows_ * spec.width : 0);
  }
}

Hdf5ColumnWriter::~Hdf5ColumnWriter() = default;

void Hdf5ColumnWriter::set_int64(size_t c, const int64_t* values) {
  std::memcpy(int_buffers_[c].data() + buffered_ * specs_[c].width, values, specs_[c].width * sizeof(int64_t));
}

void Hdf5ColumnWriter::set_float(size_t c, const float* values) {
  std::memcpy(float_buffers_[c].data() + buffered_ * specs_[c].width, values, specs_[c].width * sizeof(float));
}

void Hdf5ColumnWriter::end_row() {
  if (++buffered_ == chunk_rows_) flush();
}

void Hdf5ColumnWriter::flush() {
  hdf5_quiet();
  if (buffered_ == 0) return;
  for (size_t c = 0; c < specs_.size(); ++c) {
    const auto& spec = specs_[c];
    const int rank = spec.width == 1 ? 1 : 2;
    hsize_t new_dims[2] = {written_ + buffered_, spec.width};
    hsize_t start[2] = {written_, 0}, count[2] = {buffered_, spec.width};
    bool ok = H5Dset_extent(datasets_[c], new_dims) >= 0;
    Hid file_space = hid_space(H5Dget_space(datasets_[c]));
    Hid memory_space = hid_space(H5Screate_simple(rank, count, nullptr));
    ok = ok && file_space.valid() && memory_space.valid() &&
         H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr) >= 0;
    const void* data = spec.kind == Kind::int64 ? static_cast<const void*>(int_buffers_[c].data())
                                                : static_cast<const void*>(float_buffers_[c].data());
    hid_t memory_type = spec.kind == Kind::int64 ? H5T_NATIVE_INT64 : H5T_NATIVE_FLOAT;
    ok = ok && H5Dwrite(datasets_[c], memory_type, memory_space, file_space, H5P_DEFAULT, data) >= 0;
    if (!ok) fail("{}: cannot write dataset {}: {}", file_.path(), spec.name, hdf5_last_error());
  }
  written_ += buffered_;
  buffered_ = 0;
}

void Hdf5ColumnWriter::commit() {
  flush();
  datasets_.clear();
  file_.commit();
}

}  // namespace bk
