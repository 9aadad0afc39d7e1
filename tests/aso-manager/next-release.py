#!/usr/bin/env python3
"""Derives the rollout harness's next release from ASO v2.20.0's own module.

    next-release.py MODULE_DIR OUT_DIR

MODULE_DIR is github.com/Azure/azure-service-operator/v2@v2.20.0 in Go's
module cache (read only; nothing of it is changed or committed). OUT_DIR
becomes a tree of the module's own files, each a symbolic link to the
module's, except the few this script writes:

  - a new API version of ResourceGroup, v1api20240301 (ARM API version
    2024-03-01), with its storage variant v1api20240301storage, its ARM
    types and its admission webhooks: the v1api20200601 packages with the
    version renamed, as ASO's generator emits a new version of a kind;
  - v1api20240301storage is the hub and the CRD's storage version
    (`+kubebuilder:storageversion`, `Hub()`); v1api20200601storage is no
    longer the hub: it converts to and from the new hub, and
    v1api20200601 converts through its own storage variant, ASO's
    pattern for an older version;
  - the manager's registrations (internal/controllers) know the new
    packages, and the kind's storage type (the one its controller
    watches) is the new hub; the resource extension lists every version;
    keyvault's owner check names the new hub, as regenerated code would.

Go builds OUT_DIR's ./cmd/controller as it builds the module: every
package the script did not touch is the same source, so Go's build cache
compiles only the changed ones and what imports them. controller-gen over
OUT_DIR's api/resources gives the next release's CRD (four versions, the
new storage version). Every edit checks the text it replaces is there
exactly once, so a module that changed shape fails here, loudly.
"""

import os
import shutil
import sys

OLD = "v1api20200601"
NEW = "v1api20240301"
OLD_ARM = "2020-06-01"
NEW_ARM = "2024-03-01"
RESOURCES = "api/resources"
MODULE = "github.com/Azure/azure-service-operator/v2"


def die(message):
    sys.exit("next-release: " + message)


class Tree:
    """OUT_DIR: links to MODULE_DIR's entries, real folders and files where written."""

    def __init__(self, module, out):
        self.module = module
        self.out = out
        os.makedirs(out)
        self._fill("")

    def _fill(self, rel):
        for name in sorted(os.listdir(os.path.join(self.module, rel))):
            os.symlink(os.path.join(self.module, rel, name), os.path.join(self.out, rel, name))

    def _real_dir(self, rel):
        """Makes OUT_DIR/rel a real folder whose entries link to the module's."""
        if rel in ("", "."):
            return
        self._real_dir(os.path.dirname(rel))
        path = os.path.join(self.out, rel)
        if os.path.islink(path):
            os.unlink(path)
            os.mkdir(path)
            self._fill(rel)
        elif not os.path.isdir(path):
            os.mkdir(path)

    def read(self, rel):
        with open(os.path.join(self.module, rel), encoding="utf-8") as f:
            return f.read()

    def write(self, rel, text):
        self._real_dir(os.path.dirname(rel))
        path = os.path.join(self.out, rel)
        if os.path.islink(path):
            os.unlink(path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def edit(self, rel, *replacements):
        text = self.read(rel)
        for old, new in replacements:
            if text.count(old) != 1:
                die(f"{rel}: expected this text once, found it {text.count(old)} times: {old!r}")
            text = text.replace(old, new)
        self.write(rel, text)


def renamed(text):
    return (text.replace(OLD[len("v1api"):], NEW[len("v1api"):])
            .replace(OLD_ARM, NEW_ARM))


def copy_version(tree):
    """The new API version: every Go source of the old one's packages, renamed."""
    root = os.path.join(tree.module, RESOURCES, OLD)
    n = 0
    for folder, _, files in os.walk(root):
        rel = os.path.relpath(folder, tree.module)
        for name in sorted(files):
            if not name.endswith(".go") or name.endswith("_test.go"):
                continue
            text = tree.read(os.path.join(rel, name))
            tree.write(os.path.join(rel.replace(OLD, NEW), name), renamed(text))
            n += 1
    if n < 8:
        die(f"{root}: expected the served, storage, arm and webhook packages, found {n} files")


SPEC_HUB_METHODS = '''
// ConvertSpecFrom populates our ResourceGroup_Spec from the provided source
func (group *ResourceGroup_Spec) ConvertSpecFrom(source genruntime.ConvertibleSpec) error {
	if source == group {
		return eris.New("attempted conversion between unrelated implementations of github.com/Azure/azure-service-operator/v2/pkg/genruntime/ConvertibleSpec")
	}

	return source.ConvertSpecTo(group)
}

// ConvertSpecTo populates the provided destination from our ResourceGroup_Spec
func (group *ResourceGroup_Spec) ConvertSpecTo(destination genruntime.ConvertibleSpec) error {
	if destination == group {
		return eris.New("attempted conversion between unrelated implementations of github.com/Azure/azure-service-operator/v2/pkg/genruntime/ConvertibleSpec")
	}

	return destination.ConvertSpecFrom(group)
}
'''

STATUS_HUB_METHODS = '''
// ConvertStatusFrom populates our ResourceGroup_STATUS from the provided source
func (group *ResourceGroup_STATUS) ConvertStatusFrom(source genruntime.ConvertibleStatus) error {
	if source == group {
		return eris.New("attempted conversion between unrelated implementations of github.com/Azure/azure-service-operator/v2/pkg/genruntime/ConvertibleStatus")
	}

	return source.ConvertStatusTo(group)
}

// ConvertStatusTo populates the provided destination from our ResourceGroup_STATUS
func (group *ResourceGroup_STATUS) ConvertStatusTo(destination genruntime.ConvertibleStatus) error {
	if destination == group {
		return eris.New("attempted conversion between unrelated implementations of github.com/Azure/azure-service-operator/v2/pkg/genruntime/ConvertibleStatus")
	}

	return destination.ConvertStatusFrom(group)
}
'''

# The old storage version's conversions to and from the new hub, in the
# shape of ASO's generated ones for an older storage version (ConvertFrom
# and ConvertTo on the resource, ConvertSpec*/ConvertStatus* through an
# intermediate). The new version changes no property, so each assignment
# carries every property by its wire form (PropertyBag included).
OLD_STORAGE_CONVERSIONS = '''// Written by the rollout harness's next-release script (tests/aso-manager/next-release.py):
// the conversions of the previous storage version to and from the hub the
// next release adds.
package storage

import (
	"encoding/json"
	"fmt"

	hub "github.com/Azure/azure-service-operator/v2/api/resources/''' + NEW + '''/storage"
	"github.com/Azure/azure-service-operator/v2/pkg/genruntime"
	"github.com/rotisserie/eris"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
)

var _ conversion.Convertible = &ResourceGroup{}

// ConvertFrom populates our ResourceGroup from the provided hub ResourceGroup
func (group *ResourceGroup) ConvertFrom(source conversion.Hub) error {
	src, ok := source.(*hub.ResourceGroup)
	if !ok {
		return fmt.Errorf("expected resources/''' + NEW + '''/storage/ResourceGroup but received %T instead", source)
	}
	group.ObjectMeta = *src.ObjectMeta.DeepCopy()
	if err := group.Spec.ConvertSpecFrom(&src.Spec); err != nil {
		return eris.Wrap(err, "converting the spec from the hub")
	}
	return group.Status.ConvertStatusFrom(&src.Status)
}

// ConvertTo populates the provided hub ResourceGroup from our ResourceGroup
func (group *ResourceGroup) ConvertTo(destination conversion.Hub) error {
	dst, ok := destination.(*hub.ResourceGroup)
	if !ok {
		return fmt.Errorf("expected resources/''' + NEW + '''/storage/ResourceGroup but received %T instead", destination)
	}
	dst.ObjectMeta = *group.ObjectMeta.DeepCopy()
	if err := group.Spec.ConvertSpecTo(&dst.Spec); err != nil {
		return eris.Wrap(err, "converting the spec to the hub")
	}
	return group.Status.ConvertStatusTo(&dst.Status)
}

// ConvertSpecFrom populates our ResourceGroup_Spec from the provided source
func (group *ResourceGroup_Spec) ConvertSpecFrom(source genruntime.ConvertibleSpec) error {
	src, ok := source.(*hub.ResourceGroup_Spec)
	if !ok {
		// Convert to an intermediate form
		src = &hub.ResourceGroup_Spec{}
		if err := src.ConvertSpecFrom(source); err != nil {
			return eris.Wrap(err, "initial step of conversion in ConvertSpecFrom()")
		}
	}
	return assignProperties(group, src)
}

// ConvertSpecTo populates the provided destination from our ResourceGroup_Spec
func (group *ResourceGroup_Spec) ConvertSpecTo(destination genruntime.ConvertibleSpec) error {
	if dst, ok := destination.(*hub.ResourceGroup_Spec); ok {
		return assignProperties(dst, group)
	}
	// Convert to an intermediate form
	dst := &hub.ResourceGroup_Spec{}
	if err := assignProperties(dst, group); err != nil {
		return eris.Wrap(err, "initial step of conversion in ConvertSpecTo()")
	}
	return destination.ConvertSpecFrom(dst)
}

// ConvertStatusFrom populates our ResourceGroup_STATUS from the provided source
func (group *ResourceGroup_STATUS) ConvertStatusFrom(source genruntime.ConvertibleStatus) error {
	src, ok := source.(*hub.ResourceGroup_STATUS)
	if !ok {
		// Convert to an intermediate form
		src = &hub.ResourceGroup_STATUS{}
		if err := src.ConvertStatusFrom(source); err != nil {
			return eris.Wrap(err, "initial step of conversion in ConvertStatusFrom()")
		}
	}
	return assignProperties(group, src)
}

// ConvertStatusTo populates the provided destination from our ResourceGroup_STATUS
func (group *ResourceGroup_STATUS) ConvertStatusTo(destination genruntime.ConvertibleStatus) error {
	if dst, ok := destination.(*hub.ResourceGroup_STATUS); ok {
		return assignProperties(dst, group)
	}
	// Convert to an intermediate form
	dst := &hub.ResourceGroup_STATUS{}
	if err := assignProperties(dst, group); err != nil {
		return eris.Wrap(err, "initial step of conversion in ConvertStatusTo()")
	}
	return destination.ConvertStatusFrom(dst)
}

// assignProperties sets every property of destination from source, two
// storage variants whose properties are the same one for one.
func assignProperties(destination, source any) error {
	data, err := json.Marshal(source)
	if err != nil {
		return eris.Wrap(err, "reading the properties")
	}
	return json.Unmarshal(data, destination)
}
'''

# The served version's conversions now go through its own storage variant.
def through_storage(direction, variable, hub_cast):
    verb = "From" if direction == "From" else "To"
    return (hub_cast, f'''	// intermediate variable for conversion
	var {variable} storage.ResourceGroup
''' + (f'''	err := {variable}.ConvertFrom(hub)
	if err != nil {{
		return eris.Wrap(err, "converting from hub to {variable}")
	}}

	return group.AssignProperties_From_ResourceGroup(&{variable})
''' if verb == "From" else f'''	err := group.AssignProperties_To_ResourceGroup(&{variable})
	if err != nil {{
		return eris.Wrap(err, "converting to {variable} from group")
	}}

	return {variable}.ConvertTo(hub)
'''))


def main():
    if len(sys.argv) != 3:
        die("usage: next-release.py MODULE_DIR OUT_DIR")
    module, out = sys.argv[1], sys.argv[2]
    if not os.path.isfile(os.path.join(module, "go.mod")):
        die(f"{module}: not a Go module folder")
    if os.path.lexists(out):
        shutil.rmtree(out)
    tree = Tree(module, out)
    copy_version(tree)

    old = f"{RESOURCES}/{OLD}"
    # the previous storage version stops being the hub
    tree.edit(
        f"{old}/storage/resource_group_types_gen.go",
        ("// +kubebuilder:storageversion\n", ""),
        ("// Hub marks that this ResourceGroup is the hub type for conversion\n"
         "func (group *ResourceGroup) Hub() {}\n\n", ""),
        (SPEC_HUB_METHODS, ""),
        (STATUS_HUB_METHODS, ""),
    )
    tree.write(f"{old}/storage/resource_group_next_release.go", OLD_STORAGE_CONVERSIONS)
    tree.edit(
        f"{old}/resource_group_types_gen.go",
        through_storage("From", "source", '''	source, ok := hub.(*storage.ResourceGroup)
	if !ok {
		return fmt.Errorf("expected resources/v1api20200601/storage/ResourceGroup but received %T instead", hub)
	}

	return group.AssignProperties_From_ResourceGroup(source)
'''),
        through_storage("To", "destination", '''	destination, ok := hub.(*storage.ResourceGroup)
	if !ok {
		return fmt.Errorf("expected resources/v1api20200601/storage/ResourceGroup but received %T instead", hub)
	}

	return group.AssignProperties_To_ResourceGroup(destination)
'''),
    )

    # the manager's registrations
    short_old, short_new = "resources_v" + OLD[5:], "resources_v" + NEW[5:]
    path = f'"{MODULE}/{RESOURCES}/'
    tree.edit(
        "internal/controllers/controller_resources_gen.go",
        (f'\t{short_old}w {path}{OLD}/webhook"\n',
         f'\t{short_old}w {path}{OLD}/webhook"\n'
         f'\t{short_new} {path}{NEW}"\n'
         f'\t{short_new}s {path}{NEW}/storage"\n'
         f'\t{short_new}w {path}{NEW}/webhook"\n'),
        (f"&registration.StorageType{{Obj: new({short_old}s.ResourceGroup)}}",
         f"&registration.StorageType{{Obj: new({short_new}s.ResourceGroup)}}"),
        (f"\tresult = append(result, &registration.KnownType{{Obj: new({short_old}s.ResourceGroup)}})\n",
         f"\tresult = append(result, &registration.KnownType{{Obj: new({short_old}s.ResourceGroup)}})\n"
         "\tresult = append(result, &registration.KnownType{\n"
         f"\t\tObj:       new({short_new}.ResourceGroup),\n"
         f"\t\tDefaulter: &{short_new}w.ResourceGroup{{}},\n"
         f"\t\tValidator: &{short_new}w.ResourceGroup{{}},\n"
         "\t})\n"
         f"\tresult = append(result, &registration.KnownType{{Obj: new({short_new}s.ResourceGroup)}})\n"),
        (f"\t_ = {short_old}s.AddToScheme(scheme)\n",
         f"\t_ = {short_old}s.AddToScheme(scheme)\n"
         f"\t_ = {short_new}.AddToScheme(scheme)\n"
         f"\t_ = {short_new}s.AddToScheme(scheme)\n"),
    )
    tree.edit(
        f"{RESOURCES}/customizations/resource_group_extension_types_gen.go",
        (f'\tstorage {path}{OLD}/storage"\n',
         f'\tstorage {path}{OLD}/storage"\n'
         f'\tv{NEW[5:]} {path}{NEW}"\n'
         f'\tv{NEW[5:]}s {path}{NEW}/storage"\n'),
        ("\t\t&storage.ResourceGroup{}}",
         f"\t\t&storage.ResourceGroup{{}},\n\t\t&v{NEW[5:]}.ResourceGroup{{}},\n\t\t&v{NEW[5:]}s.ResourceGroup{{}}}}"),
    )
    tree.edit(
        "api/keyvault/customizations/vault_extensions.go",
        (f'{path}{OLD}/storage"', f'{path}{NEW}/storage"'),
    )
    print(out)


if __name__ == "__main__":
    main()
