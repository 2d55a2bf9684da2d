// libFuzzer's entry point for programs that have their own main (SwiftPM names an executable's entry
// point MODULE_main, so libFuzzer's own main is not used). Provided by -sanitize=fuzzer at link time.
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
