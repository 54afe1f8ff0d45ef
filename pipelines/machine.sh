# Sourced by the pipelines (bash): DEVICE, PRECISION and NPROC from what the machine has, unless the caller set
# them.   source machine.sh WORKERS   (WORKERS: gpus, one worker per GPU; or 1)
# GPUs (as nvidia-smi, else the NVIDIA driver, lists them; CUDA_VISIBLE_DEVICES narrows them): cuda and bf16;
# none: cpu, fp32 and one worker. One line on stderr says what was chosen and which knobs change it. DEVICE=cuda
# on a machine without a GPU stops here, in one line naming the knobs.
_bk_gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  _bk_gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
elif [ -d /proc/driver/nvidia/gpus ]; then
  _bk_gpus=$(find /proc/driver/nvidia/gpus -mindepth 1 -maxdepth 1 -type d | wc -l)
fi
if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
  _bk_visible=$(printf '%s' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c . || true)
  [ "$_bk_visible" -lt "$_bk_gpus" ] && _bk_gpus=$_bk_visible
fi
_bk_chosen=()
if [ -z "${DEVICE:-}" ]; then
  if [ "$_bk_gpus" -gt 0 ]; then DEVICE=cuda; else DEVICE=cpu; fi
  _bk_chosen+=("DEVICE=$DEVICE")
fi
if [ "$DEVICE" = cuda ] && [ "$_bk_gpus" = 0 ]; then
  echo "${0##*/}: error: DEVICE=cuda, but no GPU is visible here (nvidia-smi, the NVIDIA driver, CUDA_VISIBLE_DEVICES); set DEVICE=cpu and PRECISION=fp32 (NPROC: processes) to run on the CPU" >&2
  exit 1
fi
if [ -z "${PRECISION:-}" ]; then
  PRECISION=auto  # the tools take bf16 where the device multiplies in it natively, else fp32 (bert-train(1))
  _bk_chosen+=("PRECISION=$PRECISION")
fi
if [ -z "${NPROC:-}" ]; then
  if [ "$1" = gpus ] && [ "$DEVICE" = cuda ]; then NPROC=$_bk_gpus; else NPROC=1; fi
  _bk_chosen+=("NPROC=$NPROC")
fi
if [ ${#_bk_chosen[@]} -gt 0 ]; then
  echo "${0##*/}: $_bk_gpus GPU(s) here: ${_bk_chosen[*]} (set DEVICE, PRECISION and NPROC to choose)" >&2
fi
unset _bk_gpus _bk_visible _bk_chosen
