/* C API of the SentencePiece plug-in, libsift_spm.so.
 *
 * Why a plug-in: Debian's libsentencepiece carries its own protobuf-lite 3.14 with
 * exported symbols, and LibTorch links protobuf 3.21; both on one link line crash
 * (see NOTES.md). The plug-in is the only code that links SentencePiece. sift_core
 * opens it with dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) so its lookups find its
 * own protobuf first, and finds these functions with dlsym (datasets/sentencepiece.h).
 *
 * Plain C: no C++ type, exception or allocation crosses the boundary. Every function
 * catches everything on its side. Errors are written, NUL-terminated and truncated to
 * fit, into a caller's buffer (err, err_len); err may be NULL when err_len is 0.
 * Nothing here includes LibTorch or SentencePiece headers, so both sides can use it. */
#ifndef SIFT_PLUGINS_SENTENCEPIECE_SPM_PLUGIN_H_
#define SIFT_PLUGINS_SENTENCEPIECE_SPM_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#if defined(SIFT_SPM_BUILDING_PLUGIN)
#define SIFT_SPM_API __attribute__((visibility("default")))
#else
#define SIFT_SPM_API
#endif

/* Bumped on any change of the functions below; the loader refuses a plug-in whose
 * sift_spm_abi_version() differs (a stale libsift_spm.so from an older build). */
#define SIFT_SPM_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

typedef struct SiftSpm SiftSpm; /* a loaded model */

SIFT_SPM_API int sift_spm_abi_version(void);

/* Loads a .model file. NULL on failure, with "cannot open PATH: REASON" or
 * "PATH is not a SentencePiece model (REASON)" in err. */
SIFT_SPM_API SiftSpm* sift_spm_open(const char* model_path, char* err, size_t err_len);

/* Frees a model from sift_spm_open; NULL is ignored. */
SIFT_SPM_API void sift_spm_close(SiftSpm* model);

/* Encodes len bytes of UTF-8 text (no NUL needed) into piece ids. Returns the number
 * n of ids; they are written to ids only if n <= cap, so call again with a buffer of
 * n when n > cap (n <= len + 2 unless byte fallback splits characters into bytes).
 * -1 on error, with the reason in err. Thread-safe: SentencePieceProcessor::Encode is
 * const and keeps no state between calls, so threads may share one model. */
SIFT_SPM_API int64_t sift_spm_encode(const SiftSpm* model, const char* text, size_t len,
                                     int64_t* ids, size_t cap, char* err,
                                     size_t err_len);

/* Number of pieces; ids are 0 .. size-1. */
SIFT_SPM_API int64_t sift_spm_vocab_size(const SiftSpm* model);

/* Id of a piece ("\xe2\x96\x81the" for " the"), or the unknown id if absent. */
SIFT_SPM_API int64_t sift_spm_piece_to_id(const SiftSpm* model, const char* piece,
                                          size_t len);

/* Id of the unknown piece (0 by default). */
SIFT_SPM_API int64_t sift_spm_unk_id(const SiftSpm* model);

/* Copies piece `id` into buf (NUL-terminated if cap > 0, truncated to fit) and returns
 * its length in bytes, snprintf-style; -1 if id is out of range. */
SIFT_SPM_API int64_t sift_spm_id_to_piece(const SiftSpm* model, int64_t id, char* buf,
                                          size_t cap);

/* Trains a model: n flags of spm_train as key/value pairs without the "--" (keys[i] =
 * "input", values[i] = "a.txt"; "model_prefix", "vocab_size", "model_type", ...).
 * Pairs rather than one "--k=v ..." string so that paths may hold spaces. Also takes
 * "minloglevel" (0 info, 1 warnings, 2 errors). Writes PREFIX.model and PREFIX.vocab.
 * Returns 0 on success, else nonzero with the reason in err. Not reentrant with
 * itself (the SentencePiece log level is process-wide inside the plug-in). */
SIFT_SPM_API int sift_spm_train(const char* const* keys, const char* const* values,
                                size_t n, char* err, size_t err_len);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SIFT_PLUGINS_SENTENCEPIECE_SPM_PLUGIN_H_ */
