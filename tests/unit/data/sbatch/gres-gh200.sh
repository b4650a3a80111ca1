#!/usr/bin/env bash
#SBATCH -J vit-gh200
#SBATCH -N 2
#SBATCH --gres=gpu:gh200:4
#SBATCH -t 04:00:00
#SBATCH --mem-per-gpu=96G
#SBATCH --qos=low

srun python -m torch.distributed.run --nproc-per-node=4 train_vit.py
