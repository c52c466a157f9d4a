/*
 * plain_prog.c - e2e target built WITHOUT -finstrument-functions
 * (test e2e.err_not_instrumented): `stint record -m instrument` must refuse it.
 */
int main(void)
{
	return 0;
}
