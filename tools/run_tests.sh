#!/usr/bin/env bash
# Install everything the test suite needs (Debian 12 toolchain + Python packages), then run it all.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
need=()
for t in gcc hipcc clang-19 ld.lld-19 llvm-objdump-19 llvm-mc-19 llvm-readelf-19 clang-offload-bundler-19; do
  command -v "$t" >/dev/null 2>&1 || need+=("$t")
done
[ -f /usr/include/hsakmt.h ] || need+=(libhsakmt-dev)
[ -f /usr/include/hsa/hsa.h ] || need+=(libhsa-runtime-dev)
# AMD's rocRAND (prebuilt kernels, ~60 MB) and rocPRIM (headers) for tests/libraries
[ -f /usr/include/rocrand/rocrand.h ] || need+=(librocrand-dev)
[ -f /usr/include/rocprim/rocprim.hpp ] || need+=(librocprim-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing the Debian toolchain (missing: ${need[*]})"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq hipcc clang-19 lld-19 llvm-19 libhsa-runtime-dev libhsakmt-dev gcc \
    librocrand-dev librocprim-dev >/dev/null
fi
python3 -m pip install -q -e '.[test]'
exec python3 -m pytest -n 2 -p no:cacheprovider --durations=20 "$@"
