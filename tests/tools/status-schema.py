#!/usr/bin/env python3
"""Every key the controller writes into a TrainJob's status is in the CRD's status schema.

The API server prunes what a structural schema does not name, silently: a field written but
missing from crds/trainer.kubeflow.org_trainjobs.yaml never reaches a user. This reads the
keys from the status writer in reconcilers/trainjob.c (the string literal after the object
in add_*() and tj_json_*() calls, from add_time() to the end of tj_trainjob_status_to_json)
and looks each up among the property names anywhere under the schema's status."""
import re
import sys

import yaml

SOURCE = "reconcilers/trainjob.c"
CRD = "crds/trainer.kubeflow.org_trainjobs.yaml"


def written_keys(text):
    start = text.index("static int add_time(")
    end = text.index("\n}\n", text.index("cJSON *tj_trainjob_status_to_json("))
    return set(re.findall(r'\b(?:add_\w+|tj_json_\w+|cJSON_Add\w+)\(\s*\w+\s*,\s*"([A-Za-z]+)"', text[start:end]))


def schema_names(node, names):
    if isinstance(node, dict):
        for key, value in node.get("properties", {}).items():
            names.add(key)
            schema_names(value, names)
        for value in (node.get("items"), node.get("additionalProperties")):
            if isinstance(value, dict):
                schema_names(value, names)
    return names


def main():
    keys = written_keys(open(SOURCE).read())
    crd = yaml.safe_load(open(CRD))
    names = set()
    for version in crd["spec"]["versions"]:
        schema_names(version["schema"]["openAPIV3Schema"]["properties"]["status"], names)
    missing = sorted(keys - names)
    if not keys:
        print(f"status-schema: no keys found in {SOURCE}'s status writer")
        return 1
    if missing:
        print(f"status-schema: written to the status but not in {CRD} (the API server prunes them): {', '.join(missing)}")
        return 1
    print(f"status-schema: the {len(keys)} keys the status writer uses are in the CRD")
    return 0


if __name__ == "__main__":
    sys.exit(main())
