// Copyright 2026 The cuhal Authors.
// Under AddressSanitizer the CUDA driver fails cuInit unless ASan leaves its "shadow gap" address
// range unprotected (the driver maps memory there). Measured on the H200 (driver 580.159.04):
// with protect_shadow_gap=1, cuInit(0) returns CUDA_ERROR_OUT_OF_MEMORY. ASAN_OPTIONS from the
// environment still wins. Without ASan this function is simply unused.
//
// The one definition, for every test executable that loads the real driver: link the object
// library cuhal_test_real_asan_options (tests/support/CMakeLists.txt). It is an object library,
// not part of a static one, because nothing references the function: the ASan runtime looks it
// up by name, so an archive member defining it would never be pulled in.
extern "C" const char* __asan_default_options();
extern "C" const char* __asan_default_options() { return "protect_shadow_gap=0"; }
