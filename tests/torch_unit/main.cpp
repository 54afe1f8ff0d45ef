// The LibTorch unit tests: a doctest binary of its own, so the torch-free unit_tests never link LibTorch.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
