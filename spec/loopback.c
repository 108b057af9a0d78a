/* lo up, shared by the runtime's init (every network namespace it makes,
 * as runc does) and netproxy (a namespace it joins). */
#include "config.h"
#include "loopback.h"
#include "util.h"

#include <errno.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

int
ar_loopback_up (bool *was_down, ar_error **err)
{
  cleanup_close int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct ifreq ifr = { 0 };
  if (was_down)
    *was_down = false;
  strcpy (ifr.ifr_name, "lo");
  if (fd < 0)
    return ar_err (err, errno, "loopback: socket");
  if (ioctl (fd, SIOCGIFFLAGS, &ifr) < 0)
    return ar_err (err, errno, "loopback: get flags of lo");
  if (ifr.ifr_flags & IFF_UP)
    return 0;
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl (fd, SIOCSIFFLAGS, &ifr) < 0)
    return ar_err (err, errno, "loopback: bring lo up");
  if (was_down)
    *was_down = true;
  return 0;
}
