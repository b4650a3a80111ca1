#!/bin/bash
#SBATCH --job-name=llama-pretrain
#SBATCH --partition=gh200
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=72
#SBATCH --mem=0
#SBATCH --time=1-00:00:00
#SBATCH --signal=B:USR1@300
#SBATCH --exclusive
#SBATCH --output=logs/%x-%j.out
#SBATCH --error=logs/%x-%j.err

set -euo pipefail
echo "job $SLURM_JOB_ID on $SLURM_JOB_NUM_NODES nodes: $SLURM_JOB_NODELIST"
MASTER=$(echo "$SLURM_JOB_NODELIST" | cut -d, -f1)

srun torchrun \
	--nnodes="$SLURM_NNODES" \
	--nproc-per-node=4 \
	--node-rank="$SLURM_NODEID" \
	--rdzv-backend=static \
	--master-addr="$MASTER" --master-port=29500 \
	pretrain.py --config configs/llama-7b.yaml
