// Copyright 2026 The cuhal Authors.
// Under AddressSanitizer the CUDA driver fails cuInit unless ASan leaves its "shadow gap" address
// range unprotected (the driver maps memory there). ASAN_OPTIONS from the environment still wins.
// Without ASan this function is simply unused.
extern "C" const char* __asan_default_options();
extern "C" const char* __asan_default_options() { return "protect_shadow_gap=0"; }
