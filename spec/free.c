/* Freeing the model. Every function accepts partly filled structs: the
 * parser attaches allocations to the model as it goes and frees the whole
 * model on the first error. */
#include "config.h"
#include "util.h"
#include "json.h"
#include "parse_internal.h"
#include "spec.h"

static void
caps_free (struct ar_caps *k)
{
  if (!k)
    return;
  ar_strv_free (k->bounding, k->n_bounding);
  ar_strv_free (k->effective, k->n_effective);
  ar_strv_free (k->inheritable, k->n_inheritable);
  ar_strv_free (k->permitted, k->n_permitted);
  ar_strv_free (k->ambient, k->n_ambient);
  free (k);
}

void
ar_process_clear (struct ar_process *p)
{
  free (p->user.additional_gids);
  free (p->user.username);
  ar_strv_free (p->args, p->n_args);
  free (p->command_line);
  ar_strv_free (p->env, p->n_env);
  free (p->cwd);
  caps_free (p->capabilities);
  for (size_t i = 0; i < p->n_rlimits; i++)
    free (p->rlimits[i].type);
  free (p->rlimits);
  free (p->apparmor_profile);
  free (p->selinux_label);
  if (p->io_priority)
    free (p->io_priority->class_name);
  free (p->io_priority);
  if (p->scheduler)
    {
      free (p->scheduler->policy);
      ar_strv_free (p->scheduler->flags, p->scheduler->n_flags);
    }
  free (p->scheduler);
}

void
ar_process_free (struct ar_process *p)
{
  if (!p)
    return;
  ar_process_clear (p);
  free (p);
}

void
ar_resources_free (struct ar_resources *r)
{
  if (!r)
    return;
  for (size_t i = 0; i < r->n_devices; i++)
    free (r->devices[i].access);
  free (r->devices);
  free (r->memory);
  if (r->cpu)
    {
      free (r->cpu->cpus);
      free (r->cpu->mems);
    }
  free (r->cpu);
  if (r->block_io)
    {
      free (r->block_io->weight_device);
      free (r->block_io->throttle_read_bps);
      free (r->block_io->throttle_write_bps);
      free (r->block_io->throttle_read_iops);
      free (r->block_io->throttle_write_iops);
    }
  free (r->block_io);
  for (size_t i = 0; i < r->n_hugepage_limits; i++)
    free (r->hugepage_limits[i].page_size);
  free (r->hugepage_limits);
  if (r->network)
    {
      for (size_t i = 0; i < r->network->n_priorities; i++)
        free (r->network->priorities[i].name);
      free (r->network->priorities);
    }
  free (r->network);
  ar_kv_free (r->unified, r->n_unified);
  free (r);
}

static void
seccomp_free (struct ar_seccomp *s)
{
  if (!s)
    return;
  free (s->default_action);
  ar_strv_free (s->architectures, s->n_architectures);
  ar_strv_free (s->flags, s->n_flags);
  free (s->listener_path);
  free (s->listener_metadata);
  for (size_t i = 0; i < s->n_syscalls; i++)
    {
      ar_strv_free (s->syscalls[i].names, s->syscalls[i].n_names);
      free (s->syscalls[i].action);
      free (s->syscalls[i].args);
    }
  free (s->syscalls);
  free (s);
}

void
ar_linux_free (struct ar_linux *l)
{
  if (!l)
    return;
  for (size_t i = 0; i < l->n_namespaces; i++)
    free (l->namespaces[i].path);
  free (l->namespaces);
  free (l->uid_mappings);
  free (l->gid_mappings);
  for (size_t i = 0; i < l->n_time_offsets; i++)
    free (l->time_offsets[i].clock);
  free (l->time_offsets);
  for (size_t i = 0; i < l->n_devices; i++)
    free (l->devices[i].path);
  free (l->devices);
  free (l->cgroups_path);
  ar_resources_free (l->resources);
  free (l->rootfs_propagation);
  seccomp_free (l->seccomp);
  ar_kv_free (l->sysctl, l->n_sysctl);
  ar_strv_free (l->masked_paths, l->n_masked_paths);
  ar_strv_free (l->readonly_paths, l->n_readonly_paths);
  free (l->mount_label);
  if (l->personality)
    {
      free (l->personality->domain);
      ar_strv_free (l->personality->flags, l->personality->n_flags);
    }
  free (l->personality);
  free (l->intel_rdt_clos_id);
  free (l);
}

void
ar_spec_free (struct ar_spec *s)
{
  if (!s)
    return;
  free (s->oci_version);
  if (s->root)
    free (s->root->path);
  free (s->root);
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      struct ar_mount *m = &s->mounts[i];
      free (m->destination);
      free (m->type);
      free (m->source);
      ar_strv_free (m->options, m->n_options);
      free (m->uid_mappings);
      free (m->gid_mappings);
    }
  free (s->mounts);
  ar_process_free (s->process);
  free (s->hostname);
  free (s->domainname);
  for (int st = 0; st < AR_HOOK_N_STAGES; st++)
    {
      for (size_t i = 0; i < s->hooks.n[st]; i++)
        {
          free (s->hooks.stage[st][i].path);
          ar_strv_free (s->hooks.stage[st][i].args, s->hooks.stage[st][i].n_args);
          ar_strv_free (s->hooks.stage[st][i].env, s->hooks.stage[st][i].n_env);
        }
      free (s->hooks.stage[st]);
    }
  ar_kv_free (s->annotations, s->n_annotations);
  ar_linux_free (s->linux_);
  free (s);
}
