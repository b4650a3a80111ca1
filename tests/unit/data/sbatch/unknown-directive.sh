#!/bin/bash
#SBATCH --job-name=after-prep
#SBATCH --nodes=1
#SBATCH --dependency=afterok:4242
python train.py
