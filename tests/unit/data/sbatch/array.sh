#!/bin/bash
#SBATCH --job-name=sweep
#SBATCH --array=0-3
#SBATCH --gpus-per-node=1
#SBATCH --time=2:00:00
#SBATCH --dependency=afterok:prep

LRS=(1e-3 3e-4 1e-4 3e-5)
python train.py --lr "${LRS[$SLURM_ARRAY_TASK_ID]}" --out "results/$SLURM_ARRAY_JOB_ID-$SLURM_ARRAY_TASK_ID"
