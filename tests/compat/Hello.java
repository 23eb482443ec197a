import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/* Counts the residues of 200000 numbers in four threads; prints the table. */
public class Hello {
	public static void main(String[] args) throws Exception {
		Map<Integer, Integer> counts = new TreeMap<>();
		List<Thread> threads = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			final int from = t * 50000;
			Thread th = new Thread(() -> {
				Map<Integer, Integer> local = new TreeMap<>();
				for (int i = from; i < from + 50000; i++)
					local.merge(Integer.toString(i * 31).hashCode() % 7, 1, Integer::sum);
				synchronized (counts) {
					local.forEach((k, v) -> counts.merge(k, v, Integer::sum));
				}
			});
			threads.add(th);
			th.start();
		}
		for (Thread th : threads)
			th.join();
		System.out.println(counts);
	}
}
