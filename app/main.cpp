#include <cstdio>
int main() { std::puts("sandbox"); return 0; }
