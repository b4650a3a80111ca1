"""Kubeflow's Python SDK (the `kubeflow` package, pinned in requirements.txt) as a user drives
it: the client, and the options the tests pass to train()."""

import logging
import os

from kubeflow.trainer import KubernetesBackendConfig, TrainerClient
from kubeflow.trainer.options import (
    JobSetSpecPatch,
    JobSetTemplatePatch,
    JobSpecPatch,
    JobTemplatePatch,
    PodTemplatePatch,
    ReplicatedJobPatch,
    RuntimePatch,
    TrainingRuntimeSpecPatch,
)

from kube import REPO, kubectl

RUN_TIME = "sim.trainjob.flame.dev/run-time"


def pod_annotations(annotations):
    """The SDK's RuntimePatch option that puts annotations on the node job's pods (here: how
    long the simulated cluster runs them)."""
    pod = PodTemplatePatch(metadata={"annotations": annotations})
    node = ReplicatedJobPatch(name="node", template=JobTemplatePatch(spec=JobSpecPatch(template=pod)))
    return RuntimePatch(
        training_runtime_spec=TrainingRuntimeSpecPatch(
            template=JobSetTemplatePatch(spec=JobSetSpecPatch(replicated_jobs=[node]))
        )
    )


def train():
    # Runs in the pods (the simulated cluster does not execute it; the SDK ships its source).
    import torch.distributed as dist

    dist.init_process_group()
    print("rank", dist.get_rank(), "of", dist.get_world_size())


def install_configmap():
    """The ConfigMap the SDK's constructor reads, installed as deploy/kubeflow-sdk/ says."""
    kubectl("apply", "-k", os.path.join(REPO, "deploy", "kubeflow-sdk"))


def trainer_client(namespace, caplog):
    """A TrainerClient as a user makes it: the kubeconfig of the cluster, one namespace.

    The shipped ConfigMap kubeflow-system/kubeflow-trainer-public answers the SDK's check of
    the control plane's version, so constructing the client warns about nothing."""
    with caplog.at_level(logging.WARNING, logger="kubeflow"):
        c = TrainerClient(KubernetesBackendConfig(namespace=namespace, config_file=os.environ["KUBECONFIG"]))
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    return c
