// A fastText .ftz's product quantization (QuantMatrix) as Sift's PqTable
// (models/product_quantizer.h): the same codes and centroids, so the rows decode to the
// same floats fastText computes from them.
#pragma once

#include "models/product_quantizer.h"
#include "tools/sift/fasttext_model_file.h"

namespace sift::cli {

// The rows of `q` in fastText's order. fastText's last sub-vector has `lastdsub` dims
// when dsub does not divide the dimension; Sift's sub-vectors all have one size, so then
// each sub-vector is cut into pieces of gcd(dsub, lastdsub) dims, each keeping its
// sub-vector's code, with the sub-vector's 256 centroids cut to the piece: the same rows,
// exactly, from dsub / gcd times as many codes.
PqTable pq_table_of(const FastTextQuantMatrix& q);

}  // namespace sift::cli
