"""`ddplint doctor`: the machine, its software and environment, and the launch command, checked
before a multi-GPU run.

The linter reads code; what breaks a run as often is around it: too few GPUs for the ranks
asked for, a `/dev/shm` too small for the DataLoader workers, an `NCCL_*` variable left from an
old workaround, torchvision built for another torch, a launcher whose arguments the script's
parser rejects. The doctor looks at those, on the node (or in the container) where training
will run:

- `facts`: what is read, once, through a `System` whose paths and readers tests replace;
- `machine`, `environment`, `software`, `launch`: one function per check, each registered
  with its code (`DDPE...`) in `checks`;
- `command`: the launch command, from words, a shell script or a SLURM script;
- `script`: what the training script says (workers, sharing strategy, timeout, rank-0 work,
  its parser), read with the linter's semantic model and its rules through the public API;
- `probes`: the optional live probes (`--probe`), each announced, leaving nothing behind;
- `report`: text, JSON and SARIF; `cli`: arguments and exit codes.

Nothing is changed on the machine, and nothing is guessed: where a fact cannot be read, the
checks that need it say "could not check" and why.
"""
