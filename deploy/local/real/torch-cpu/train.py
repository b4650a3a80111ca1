"""A small distributed training run on the CPU, for the local cluster's real nodes: it
proves that a TrainJob's ranks find each other and compute together, not how fast.

Each rank joins the process group with the gloo backend from its environment (what torchrun,
the controller's wiring or mpirun gives it), checks an all-reduce whose result it knows in
advance, trains a tiny linear model on made-up data with DistributedDataParallel for a few
steps, and rank 0 writes a checkpoint. Every line it prints starts with "rank R:".

    torchrun train.py                  ranks from torchrun (PET_* from the controller)
    python3 train.py                   one process per pod: RANK, WORLD_SIZE, MASTER_ADDR
    mpirun ... python3 train.py        ranks from OpenMPI (OMPI_COMM_WORLD_*), MASTER_ADDR
                                       passed with mpirun -x

Options: --steps N, --step-seconds S (a pause after each step, for a job that must still
be running when something happens to it), --checkpoint-dir DIR (rank 0 writes model.pt and
checkpoint.json there at the end, and every rank writes rank-R.json there when it gets
SIGTERM), --crash-rank R and --crash-step N (that rank raises an error at that step).

While it runs, each rank reads the deadline file /etc/trainjob/deadline after every step and
says once what it found there; on SIGTERM it says so, writes what it knows and exits 143.
"""

import argparse
import json
import os
import signal
import socket
import sys
import time

DEADLINE_FILE = "/etc/trainjob/deadline"


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--step-seconds", type=float, default=0.0)
    p.add_argument("--checkpoint-dir", default="")
    p.add_argument("--crash-rank", type=int, default=-1)
    p.add_argument("--crash-step", type=int, default=0)
    return p.parse_args()


def topology():
    """(rank, world size, local rank) of this process. OpenMPI's variables come first: the
    launcher's own environment has the controller's RANK and WORLD_SIZE, which mpirun passes
    on to the ranks it starts on its own host."""
    if "OMPI_COMM_WORLD_RANK" in os.environ:
        e = os.environ
        rank, world = int(e["OMPI_COMM_WORLD_RANK"]), int(e["OMPI_COMM_WORLD_SIZE"])
        local = int(e.get("OMPI_COMM_WORLD_LOCAL_RANK", "0"))
        os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(local))
        return rank, world, local
    return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ.get("LOCAL_RANK", "0"))


class Run:
    def __init__(self, args, rank, world):
        self.args, self.rank, self.world = args, rank, world
        self.step = 0
        self.deadline = None

    def say(self, what):
        # One write of the whole line: the ranks of a pod share its stdout, and a pipe keeps
        # a write of less than PIPE_BUF whole, where print's separate writes of the text and
        # the newline (unbuffered, as under torchrun) let another rank's line in between.
        os.write(1, f"rank {self.rank}: {what}\n".encode())

    def record(self, name, **fields):
        if not self.args.checkpoint_dir:
            return
        os.makedirs(self.args.checkpoint_dir, exist_ok=True)
        path = os.path.join(self.args.checkpoint_dir, name)
        with open(path + ".tmp", "w") as f:
            json.dump({"rank": self.rank, "world_size": self.world, "step": self.step,
                       "deadline": self.deadline, **fields}, f)
        os.replace(path + ".tmp", path)

    def on_sigterm(self, signum, frame):
        self.say(f"got SIGTERM at step {self.step}, deadline {self.deadline}")
        self.record(f"rank-{self.rank}.json", signal="SIGTERM")
        os._exit(128 + signum)

    def read_deadline(self):
        if self.deadline is not None:
            return
        try:
            with open(DEADLINE_FILE) as f:
                text = f.read().strip()
        except FileNotFoundError:
            return
        if text:
            self.deadline = text
            self.say(f"deadline {text} (read from {DEADLINE_FILE})")


def main():
    args = parse()
    rank, world, local = topology()
    run = Run(args, rank, world)
    signal.signal(signal.SIGTERM, run.on_sigterm)
    run.say(f"rank {rank} of {world} (local rank {local}) on {socket.gethostname()}, "
            f"master {os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}")

    # torch takes seconds to import: after the line above, so that a pod's log shows at once
    # that it started.
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world)
    total = torch.tensor([float(rank + 1)])
    dist.all_reduce(total)
    expected = world * (world + 1) / 2
    if total.item() != expected:
        run.say(f"all_reduce wrong: {total.item():g}, expected {expected:g}")
        sys.exit(3)
    run.say(f"all_reduce ok: {total.item():g} = 1 + ... + {world}")

    # y = x . w + 1 with w = (1, 2, 3, 4), and noise; each rank its own batch.
    torch.manual_seed(0)
    model = DistributedDataParallel(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.Generator().manual_seed(1000 + rank)
    x = torch.randn(64, 4, generator=data)
    y = x @ torch.tensor([[1.0], [2.0], [3.0], [4.0]]) + 1 + 0.01 * torch.randn(64, 1, generator=data)
    loss = None
    for run.step in range(1, args.steps + 1):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        run.say(f"step {run.step}/{args.steps} loss {loss.item():.4f}")
        if rank == args.crash_rank and run.step == args.crash_step:
            raise RuntimeError(f"rank {rank} crashed at step {run.step} on purpose")
        run.read_deadline()
        time.sleep(args.step_seconds)

    # DistributedDataParallel keeps the replicas equal: the sum of every rank's weights is
    # world times this rank's own.
    weights = torch.cat([p.detach().flatten() for p in model.parameters()])
    summed = weights.clone()
    dist.all_reduce(summed)
    if not torch.allclose(summed, weights * world, atol=1e-5):
        run.say("the replicas differ after training")
        sys.exit(4)
    run.say(f"replicas equal, final loss {loss.item():.4f}")
    if rank == 0 and args.checkpoint_dir:
        os.makedirs(args.checkpoint_dir, exist_ok=True)
        torch.save(model.module.state_dict(), os.path.join(args.checkpoint_dir, "model.pt"))
        run.record("checkpoint.json", loss=loss.item(), weights=weights.tolist())
        run.say(f"checkpoint written to {args.checkpoint_dir}")
    dist.barrier()
    dist.destroy_process_group()
    run.say("done")


if __name__ == "__main__":
    main()
