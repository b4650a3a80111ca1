#!/bin/bash
# Preprocessing that asks for CPUs and memory but no GPU: it gets none, as in Slurm, not the
# runtime's whole node.
#SBATCH --job-name=tokenize
#SBATCH --cpus-per-task=16
#SBATCH --mem=64G
#SBATCH --time=20

python tokenize.py
