"""The trainer's parts, behind `numerics._core.trainer` (whose names are the public ones); each
module reads top to bottom:

- `tasks`: what a member trains on: how its prompts are drawn and how a model predicts from them;
- `config`: what a run is given (`TrainConfig`) and gives back (`TrainResult`, its
  `TrainHistory` and the records it grows from), and the errors that end it;
- `checkpoints`: what must match to resume a run (its fingerprint), what a checkpoint holds,
  its atomic write, a damaged file read as none, a whole run's checkpoint cut into member
  slices and merged back;
- `graph`: the CUDA-graph step path: plain warm-up steps on a side stream, one capture, replays;
- `deadline`: a run stopped at a wall-clock deadline, resumable from the step it stopped at;
- `loop`: one process's training (as nanoGPT's ``train.py``): the members' model, optimizer
  and data streams, a resumed checkpoint, then step, log, callback, checkpoint, deadline;
- `workers`: slices of the members trained side by side in spawned processes, merged back.
"""
