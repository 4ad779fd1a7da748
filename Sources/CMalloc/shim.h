#ifndef STEMDECK_CMALLOC_SHIM_H
#define STEMDECK_CMALLOC_SHIM_H
#include <malloc.h>
#include <stddef.h>

/* glibc's heap figures for the `debug heap` diagnostic (control thread only; never the realtime
   path: malloc_trim takes the allocator's locks). Swift's Glibc module does not export malloc.h.
   Returns the bytes the program holds from the allocator (mallinfo2: uordblks + hblkhd) after
   returning free heap pages to the system with malloc_trim(0). */
static inline size_t stemdeck_heap_in_use_after_trim(void) {
  malloc_trim(0);
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}
#endif
