// A Flink SQL job whose operator state holds FLIP-527's Events row, for
// tests/flink/test_flink_sql_job.py. The table (a DataStream of fixed rows turned into a table,
// with a processing-time attribute) is
//
//   Events (id BIGINT NOT NULL, device ROW<userId INT, `timestamp` BIGINT, deviceType STRING>,
//           note STRING, proctime AS PROCTIME())
//
// (version 2: device ROW<userId INT, `timestamp` BIGINT, deviceType STRING, region STRING>) and
// the query keeps the last row of every id (a deduplication, whose planner-written value state
// holds the whole input row):
//
//   SELECT id, device, note FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY
//   proctime DESC) AS rn FROM Events) WHERE rn = 1
//
// Rows (files of lines "ID<TAB>DEVICE<TAB>NOTE"): a value is "N" (null), a number in decimal or
// "x" + the hex of a string's UTF-8 bytes; DEVICE is "N" or its fields joined by ",". Every row
// the query emits is printed as "EMIT KIND ID DEVICE NOTE" (KIND +I, -U, +U or -D) in the same
// encoding. Options (after the mode's arguments, key=value): Flink configuration options given to
// the table environment (e.g. table.exec.uid.generation=ALWAYS).
//
//   java SqlJob write ROWS OUT_DIR [OPTIONS]
//       Version 1 in a local MiniCluster (hashmap backend, state in _metadata, max parallelism
//       128, parallelism 1): prints its operators (as plan does), and once the query has emitted
//       a row for every input row, stops the job with a canonical savepoint into OUT_DIR
//       ("SAVEPOINT path").
//
//   java SqlJob restore ROWS SAVEPOINT... [OPTIONS]
//       Version 2, once per SAVEPOINT, restored from it, fed ROWS: prints "JOB i", its
//       operators (as plan does), and the rows
//       emitted until every input row was answered, then "RESTORED i"; or "REFUSED i" followed
//       by the failure's cause chain, one "CAUSE class: message" line each, outermost first.
//
//   java SqlJob plan VERSION... [OPTIONS]
//       No job run: the job graph of each VERSION (1 or 2) in turn, built in this one JVM:
//       "PLAN VERSION", then one line per operator, "OPERATOR operator-id uid=UID name=NAME"
//       (UID "-" when the operator has none), and "INPUT-SNAPSHOT hex": the versioned snapshot
//       (TypeSerializerSnapshot.writeVersionedSnapshot) of the planner's serializer of the
//       deduplication's input row, the row its state keeps.

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.OperatorIDPair;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.functions.source.legacy.SourceFunction;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

public class SqlJob {

    static final String QUERY = "SELECT id, device, note FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id "
            + "ORDER BY proctime DESC) AS rn FROM Events) WHERE rn = 1";
    static final List<String> EMITTED = Collections.synchronizedList(new ArrayList<>());

    static String token(Object value) {
        if (value == null) {
            return "N";
        }
        if (value instanceof String) {
            StringBuilder sb = new StringBuilder("x");
            for (byte b : ((String) value).getBytes(StandardCharsets.UTF_8)) {
                sb.append(String.format("%02x", b));
            }
            return sb.toString();
        }
        if (value instanceof Row) {
            Row row = (Row) value;
            List<String> parts = new ArrayList<>();
            for (int i = 0; i < row.getArity(); i++) {
                parts.add(token(row.getField(i)));
            }
            return String.join(",", parts);
        }
        return value.toString();
    }

    static Object value(String token, TypeInformation<?> type) {
        if (token.equals("N")) {
            return null;
        }
        if (type.equals(Types.STRING)) {
            byte[] out = new byte[(token.length() - 1) / 2];
            for (int i = 0; i < out.length; i++) {
                out[i] = (byte) Integer.parseInt(token.substring(1 + 2 * i, 3 + 2 * i), 16);
            }
            return new String(out, StandardCharsets.UTF_8);
        }
        if (type.equals(Types.INT)) {
            return Integer.parseInt(token);
        }
        if (type.equals(Types.LONG)) {
            return Long.parseLong(token);
        }
        RowTypeInfo rowType = (RowTypeInfo) type;
        String[] parts = token.split(",", -1);
        if (parts.length != rowType.getArity()) {
            throw new IllegalArgumentException("device " + token + " has " + parts.length + " fields, the table's "
                    + rowType.getArity());
        }
        Row row = new Row(parts.length);
        for (int i = 0; i < parts.length; i++) {
            row.setField(i, value(parts[i], rowType.getTypeAt(i)));
        }
        return row;
    }

    static RowTypeInfo eventsType(int version) {
        RowTypeInfo device = version == 1
                ? new RowTypeInfo(new TypeInformation<?>[] {Types.INT, Types.LONG, Types.STRING},
                        new String[] {"userId", "timestamp", "deviceType"})
                : new RowTypeInfo(new TypeInformation<?>[] {Types.INT, Types.LONG, Types.STRING, Types.STRING},
                        new String[] {"userId", "timestamp", "deviceType", "region"});
        return new RowTypeInfo(new TypeInformation<?>[] {Types.LONG, device, Types.STRING},
                new String[] {"id", "device", "note"});
    }

    static List<Row> readRows(String path, RowTypeInfo type) throws Exception {
        List<Row> rows = new ArrayList<>();
        for (String line : Files.readAllLines(Paths.get(path), StandardCharsets.UTF_8)) {
            String[] fields = line.split("\t", -1);
            Row row = new Row(3);
            for (int i = 0; i < 3; i++) {
                row.setField(i, value(fields[i], type.getTypeAt(i)));
            }
            rows.add(row);
        }
        return rows;
    }

    /** Emits its rows, then idles until cancelled or stopped. */
    static final class Events implements SourceFunction<Row> {
        final List<Row> rows;
        volatile boolean running = true;

        Events(List<Row> rows) {
            this.rows = rows;
        }

        @Override
        public void run(SourceContext<Row> ctx) throws Exception {
            synchronized (ctx.getCheckpointLock()) {
                for (Row row : rows) {
                    ctx.collect(row);
                }
            }
            while (running) {
                Thread.sleep(20);
            }
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    /** Prints (keeps) every row the query emits. */
    static final class Collect extends ProcessFunction<Row, Row> {
        @Override
        public void processElement(Row row, Context ctx, Collector<Row> out) {
            EMITTED.add("EMIT " + row.getKind().shortString() + " " + token(row.getField(0)) + " "
                    + token(row.getField(1)) + " " + token(row.getField(2)));
        }
    }

    static StreamExecutionEnvironment environment(String savepoint, List<String> options) {
        Configuration conf = new Configuration();
        conf.setString("state.backend.type", "hashmap");
        conf.setString("execution.checkpointing.storage", "jobmanager");
        conf.setString("restart-strategy.type", "none");
        conf.setString("rest.bind-port", "0");
        if (savepoint != null) {
            conf.setString("execution.state-recovery.path", savepoint);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
        env.setMaxParallelism(128);
        return env;
    }

    /** The job's stream graph: source, the SQL query, the collecting sink. */
    static StreamGraph graph(StreamExecutionEnvironment env, int version, List<Row> rows, List<String> options) {
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        for (String option : options) {
            int eq = option.indexOf('=');
            tEnv.getConfig().getConfiguration().setString(option.substring(0, eq), option.substring(eq + 1));
        }
        DataStream<Row> events = env.addSource(new Events(rows), "events", eventsType(version)).uid("events");
        tEnv.createTemporaryView("Events", tEnv.fromDataStream(events,
                Schema.newBuilder().columnByExpression("proctime", "PROCTIME()").build()));
        Table result = tEnv.sqlQuery(QUERY);
        tEnv.toChangelogStream(result).process(new Collect()).uid("collect").name("collect")
                .sinkTo(new DiscardingSink<>()).uid("sink").name("sink");
        return env.getStreamGraph();
    }

    public static void main(String[] args) {
        int status = 0;
        try {
            run(args);
        } catch (Throwable e) {
            e.printStackTrace();
            status = 1;
        }
        System.out.flush();
        Runtime.getRuntime().halt(status); // the MiniCluster's threads would keep the JVM alive
    }

    static void run(String[] args) throws Exception {
        List<String> positional = new ArrayList<>();
        List<String> options = new ArrayList<>();
        for (String arg : args) {
            (arg.contains("=") ? options : positional).add(arg);
        }
        switch (positional.get(0)) {
            case "plan":
                for (int i = 1; i < positional.size(); i++) {
                    plan(Integer.parseInt(positional.get(i)), options);
                }
                break;
            case "write":
                write(positional.get(1), positional.get(2), options);
                break;
            case "restore":
                for (int i = 2; i < positional.size(); i++) {
                    restore(i - 2, positional.get(1), positional.get(i), options);
                }
                break;
            default:
                throw new IllegalArgumentException("mode " + positional.get(0) + ": should be plan, write or restore");
        }
    }

    static void plan(int version, List<String> options) throws Exception {
        StreamExecutionEnvironment env = environment(null, options);
        System.out.println("PLAN " + version);
        operators(graph(env, version, new ArrayList<>(), options));
    }

    static void operators(StreamGraph graph) throws Exception {
        for (StreamNode node : graph.getStreamNodes()) {
            if (node.getOperatorName().startsWith("Deduplicate[")) {
                // the planner's serializer of the deduplication's input row, which its state keeps
                DataOutputSerializer out = new DataOutputSerializer(256);
                TypeSerializerSnapshot.writeVersionedSnapshot(out, node.getTypeSerializersIn()[0].snapshotConfiguration());
                StringBuilder hex = new StringBuilder();
                for (byte b : out.getCopyOfBuffer()) {
                    hex.append(String.format("%02x", b));
                }
                System.out.println("INPUT-SNAPSHOT " + hex);
            }
        }
        JobGraph job = graph.getJobGraph();
        for (JobVertex vertex : job.getVerticesSortedTopologicallyFromSources()) {
            List<OperatorIDPair> ids = vertex.getOperatorIDs();
            for (OperatorIDPair pair : ids) {
                String uid = pair.getUserDefinedOperatorUid() == null ? "-" : pair.getUserDefinedOperatorUid();
                String name = pair.getUserDefinedOperatorName() == null ? "-" : pair.getUserDefinedOperatorName();
                System.out.println("OPERATOR " + pair.getGeneratedOperatorID() + " uid=" + uid + " name=" + name);
            }
        }
    }

    static JobClient start(StreamExecutionEnvironment env, StreamGraph graph) throws Exception {
        return env.executeAsync(graph);
    }

    /** The emitted rows answering an input row (+I for a new id, +U for a known one; -U comes before). */
    static int answers() {
        synchronized (EMITTED) {
            int n = 0;
            for (String line : EMITTED) {
                n += line.startsWith("EMIT +I ") || line.startsWith("EMIT +U ") ? 1 : 0;
            }
            return n;
        }
    }

    /** Waits until ``count`` input rows were answered; false when the job ended first. */
    static boolean await(JobClient client, int count) throws Exception {
        long deadline = System.currentTimeMillis() + 300_000;
        while (answers() < count) {
            boolean over;
            try {
                over = client.getJobStatus().get().isGloballyTerminalState();
            } catch (Exception e) {
                over = true; // the local MiniCluster shuts down once a failed job has ended
            }
            if (over) {
                return false;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException(answers() + " of " + count + " rows answered in 300 s");
            }
            Thread.sleep(50);
        }
        return true;
    }

    static void write(String rowsPath, String out, List<String> options) throws Exception {
        List<Row> rows = readRows(rowsPath, eventsType(1));
        StreamExecutionEnvironment env = environment(null, options);
        StreamGraph graph = graph(env, 1, rows, options);
        operators(graph);
        JobClient client = start(env, graph);
        if (!await(client, rows.size())) {
            client.getJobExecutionResult().get();
            throw new IllegalStateException("the job ended before emitting every row");
        }
        for (String line : EMITTED) {
            System.out.println(line);
        }
        long deadline = System.currentTimeMillis() + 300_000;
        String path = null;
        while (path == null) {
            try {
                path = client.stopWithSavepoint(false, new File(out).toURI().toString(), SavepointFormatType.CANONICAL)
                        .get(300, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                if (System.currentTimeMillis() > deadline) {
                    throw e;
                }
                Thread.sleep(500); // tasks still being deployed on a loaded machine
            }
        }
        System.out.println("SAVEPOINT " + path);
    }

    static void refused(int index, Throwable cause) {
        System.out.println("REFUSED " + index);
        for (; cause != null; cause = cause.getCause()) {
            System.out.println("CAUSE " + cause.getClass().getName() + ": "
                    + String.valueOf(cause.getMessage()).replace('\n', ' '));
        }
    }

    static void restore(int index, String rowsPath, String savepoint, List<String> options) throws Exception {
        List<Row> rows = readRows(rowsPath, eventsType(2));
        EMITTED.clear();
        System.out.println("JOB " + index);
        StreamExecutionEnvironment env = environment(savepoint, options);
        StreamGraph graph = graph(env, 2, rows, options);
        operators(graph);
        JobClient client;
        try {
            client = start(env, graph); // a savepoint whose state no operator takes fails here
        } catch (Exception e) {
            refused(index, e);
            return;
        }
        try {
            // each input row answers with -U (the restored row) and +U, or +I for a new id
            boolean answered = await(client, rows.size());
            synchronized (EMITTED) {
                for (String line : EMITTED) {
                    System.out.println(line);
                }
            }
            if (answered) {
                System.out.println("RESTORED " + index);
                return;
            }
            Throwable cause = null;
            try {
                client.getJobExecutionResult().get();
            } catch (Exception e) {
                cause = e;
            }
            refused(index, cause);
        } finally {
            try {
                client.cancel().get(300, TimeUnit.SECONDS);
            } catch (Exception e) {
                // the job is over already
            }
        }
    }
}
