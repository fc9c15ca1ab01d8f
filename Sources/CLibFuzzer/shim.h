// libFuzzer's driver entry point (compiler-rt, linked by `-sanitize=fuzzer`). Only the fuzzing build of
// `bridge-fuzz` calls it; a normal build never references it, so it links without libFuzzer.
#ifndef CLIBFUZZER_SHIM_H
#define CLIBFUZZER_SHIM_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer with `argc`/`argv` (its flags and corpus directories) and `callback` as the fuzz target.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
