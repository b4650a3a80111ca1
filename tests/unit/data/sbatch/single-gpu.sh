#!/bin/bash
# One GPU for a quick fine-tuning run, as a first job on the cluster looks.
#SBATCH --job-name=bert-finetune
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --time=30
#SBATCH --output=%x-%j.out

module load python 2>/dev/null || true
python finetune.py --epochs 3 --batch-size 32
