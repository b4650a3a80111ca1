#!/bin/bash
#SBATCH --job-name=after-prep
#SBATCH --nodes=1
#SBATCH --reservation=maint
python train.py
