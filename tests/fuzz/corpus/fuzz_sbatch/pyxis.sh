#!/bin/bash
#SBATCH --job-name=nemo-sft
#SBATCH -p gh200
#SBATCH -N 2
#SBATCH --gpus-per-node=4
#SBATCH --time=12:00:00
#SBATCH --container-image=nvcr.io#nvidia/nemo:24.07
#SBATCH --container-mounts=datasets/sft:/data:ro,checkpoints:/checkpoints
#SBATCH --container-workdir=/workspace/nemo
#SBATCH --export=ALL,HF_HOME=/checkpoints/hf,WANDB_MODE=offline

srun python examples/nlp/sft.py trainer.num_nodes=$SLURM_NNODES
