#!/usr/bin/env bash
# The checks that need a GPU, as one short run for a machine that has one (and may have no
# network): the GPU-only experiments of DDP011 and DDP017, the bundled `ddplint verify`, and
# `verify --script` on the ImageNet-style example. Results go to $OUT (default ./gpu-check).
#
# A machine without the linter's dependencies gets them from wheels downloaded beforehand:
#   pip download -d .gpu/wheels --only-binary=:all: --python-version 3.12 \
#     --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 libcst flake8 pyyaml
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-gpu-check}
mkdir -p "$OUT"
[ -d .gpu/wheels ] && python3 -m pip install -q --no-index --no-deps .gpu/wheels/*.whl
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
stamp() { while IFS= read -r line; do printf '%s %s\n' "$(date +%T)" "$line"; done; }
nvidia-smi -L
python3 -c "import torch; print('torch', torch.__version__, 'GPUs', torch.cuda.device_count())"
timeout 150 python3 -m pytest -p no:cacheprovider -n 0 -q -s -rs tests/harness/test_gpu_experiments.py \
  > "$OUT/experiments.txt" 2>&1
timeout 200 python3 -u -m ddplint verify --timeout 60 --json "$OUT/verify.json" 2>&1 | stamp > "$OUT/verify.txt"
timeout 90 python3 -m ddplint verify --script tests/data/scripts/imagenet_style/main.py --max-steps 3 \
  --json "$OUT/script.json" -- --dummy --dummy-size 64 --epochs 2 -b 8 > "$OUT/script.txt" 2>&1
tail -n 3 "$OUT/experiments.txt" "$OUT/verify.txt" "$OUT/script.txt"
