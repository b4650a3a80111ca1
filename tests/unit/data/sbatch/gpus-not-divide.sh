#!/bin/bash
#SBATCH --job-name=odd
#SBATCH --nodes=4
#SBATCH --gpus=6
srun python train.py
