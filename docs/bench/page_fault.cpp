// What a fresh page costs on this machine: 256 MiB of anonymous memory, mapped and then written
// one byte per 4 KiB page, so every write is a first touch (a page fault and a zeroed page).
// Not part of the build:  g++ -O2 docs/bench/page_fault.cpp -o /tmp/page_fault
#include <sys/mman.h>

#include <chrono>
#include <cstdio>

int main() {
    const std::size_t bytes = std::size_t(256) << 20, page = 4096;
    void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return 1;
    volatile char* p = static_cast<volatile char*>(map);
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < bytes; i += page) p[i] = 1;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%.2f us per fresh 4 KiB page (%zu pages)\n", s / (bytes / page) * 1e6,
                bytes / page);
    munmap(map, bytes);
}
