/* SPDX-License-Identifier: Apache-2.0 */
#include "handover_peer.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

int handover_check_peer(int fd, uid_t want)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	if (len != sizeof(cred))
		return -EPROTO;
	return want == HANDOVER_ANY_UID || cred.uid == want ? 0 : -EPERM;
}

int handover_addr(struct sockaddr_un *sa, const char *path)
{
	size_t len = strlen(path);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (len == 0 || len >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, path, len);
	return 0;
}
