-- sqlite3 :memory: ".read q.sql": a table of 20000 rows from a recursive CTE,
-- an index, a join and aggregates
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, name TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO t SELECT i, (i * 7919) % 1000, printf('name-%05d', i) FROM n;
CREATE INDEX t_k ON t(k);
CREATE TABLE g(k INTEGER PRIMARY KEY, label TEXT);
INSERT INTO g SELECT DISTINCT k, 'group ' || k FROM t WHERE k % 100 = 0;
SELECT g.label, count(*), min(t.name), sum(t.id) FROM t JOIN g USING (k) GROUP BY g.k ORDER BY g.k;
SELECT count(*), sum(length(name)), max(k) FROM t;
SELECT name FROM t WHERE k = 999 ORDER BY id LIMIT 3;
