// A generic HDF5 table writer: named int64 or float32 columns of a fixed width, one row per record, extendible
// in N and written in chunk-sized blocks (memory = one chunk per column). A column of width 1 is stored as a
// 1-D dataset [N], wider ones as [N, width]. Used by tfrecord2hdf5 for records that are not pretraining samples
// (classifier features, anything tf.train.Example can hold in int64 and float lists).
#pragma once

#include "hdf5/hdf5_handle.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bk {

class Hdf5ColumnWriter {
 public:
  enum class Kind { int64, float32 };
  struct ColumnSpec {
    std::string name;
    Kind kind;
    uint64_t width;
  };

  Hdf5ColumnWriter(const std::string& path, std::vector<ColumnSpec> columns, int gzip_level, bool overwrite,
                   size_t chunk_rows = 1024);
  ~Hdf5ColumnWriter();
  Hdf5ColumnWriter(const Hdf5ColumnWriter&) = delete;
  Hdf5ColumnWriter& operator=(const Hdf5ColumnWriter&) = delete;

  // Row values of column c; the caller passes exactly width values (int64 or float as the column's kind).
  void set_int64(size_t c, const int64_t* values);
  void set_float(size_t c, const float* values);
  void end_row();
  void commit();

  const std::vector<ColumnSpec>& columns() const { return specs_; }
  uint64_t rows() const { return written_ + buffered_; }

 private:
  void flush();

  Hdf5TempFile file_;
  std::vector<ColumnSpec> specs_;
  std::vector<Hid> datasets_;
  std::vector<std::vector<int64_t>> int_buffers_;
  std::vector<std::vector<float>> float_buffers_;
  size_t chunk_rows_;
  size_t buffered_ = 0;
  uint64_t written_ = 0;
};

}  // namespace bk
