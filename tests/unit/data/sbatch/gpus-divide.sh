#!/bin/bash
#SBATCH --job-name=even
#SBATCH --nodes=2
#SBATCH -G h100:8
#SBATCH --ntasks-per-node=8
srun python train.py
