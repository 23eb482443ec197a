/*
 * Hello world through stdio, with an exit handler and a destructor that
 * allocate after main: glibc's stdin and stdout buffers are live at exit
 * unless __libc_freeres() frees them.  hello_stdio [<status> [thread]]:
 * reads a line of stdin, prints it after the greeting, exits with status
 * (default 0); with "thread", a thread is made and joined first.  The
 * handler's block is 1111 bytes, the destructor's 2222, both freed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void handler(void)
{
	void *volatile p = malloc(1111);

	printf("exit handler\n");
	free(p);
}

__attribute__((destructor)) static void destructor(void)
{
	void *volatile p = malloc(2222);

	printf("destructor\n");
	free(p);
}

static void *nothing(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	char line[64];
	pthread_t t;

	if (argc > 2 && !strcmp(argv[2], "thread") && !pthread_create(&t, NULL, nothing, NULL))
		pthread_join(t, NULL);
	atexit(handler);
	printf("hello, world\n");
	if (fgets(line, sizeof(line), stdin))
		printf("read: %s", line);
	return argc > 1 ? atoi(argv[1]) : 0;
}
