// Writes real Flink canonical savepoints, with the values they hold, and restores them.
//
//   java SavepointJob write OUT_DIR CASE...
//       CASE = name:backend=hashmap|rocksdb,storage=jobmanager|files,compression=true|false,
//                   maxp=N,p=N,key=string|long|tuple[,bulk=N]
//       bulk=N (benchmarks): N more keys, each with a "count" value and one "amounts" map entry,
//       not listed in expected.json; with bulkstate=pojo instead each with a "pojo" value only
//       (SavepointPojo("bulk-<i>", i, i / 4.0, i % 1000)).
//       For each case, runs one DataStream job in a local MiniCluster, waits until every record
//       went through, takes a canonical savepoint into OUT_DIR/name/savepoint-*, cancels the job
//       and writes OUT_DIR/name/expected.json (the form is specified in tests/flink/savepoints.py).
//
//   java SavepointJob restore REQUESTS RESULTS
//       REQUESTS: one restore per line, "request-name savepoint-dir option=value ...", options
//       backend, maxp, p, key (as for write), state.NAME=TYPE (read the keyed state NAME with
//       another type), ttl.NAME=on|off, skip.NAME=on (the restored job does not declare the
//       keyed state NAME, so Flink neither judges nor reads it). For each line, runs the same
//       topology restored from the savepoint, feeds one probe record per key, lets every
//       event-time timer and window fire, and appends JSON lines to RESULTS: what each operator
//       read, then the verdict.
//
//   java SavepointJob remigrate SAVEPOINT OUT_DIR option=value ...
//       (benchmarks) Flink's own migration: runs the same topology restored from SAVEPOINT with
//       the options of a restore line (state.NAME=TYPE: the new types, whose classes may come
//       first on the classpath), its source emitting nothing and never ending, so the job only
//       restores (the RocksDB backend migrates a state whose serializer needs it when the
//       operator registers it) and then takes a canonical savepoint into OUT_DIR; prints one
//       JSON line {"millis": from submitting the job to the savepoint's completion,
//       "savepoint": its path}.
//
// The job (same uids in both modes):
//   source (legacy source, parallelism 1, operator list state "emitted")
//     -> opstate (non-keyed map, operator list state "seen-split" and union list state "seen-union")
//     -> keyBy(case key) -> keyed-states (KeyedProcessFunction: value, list, map, reducing,
//        aggregating, TTL states and timers) -> sink-states
//     -> window-input -> keyBy(String) -> window (tumbling event-time windows of one hour,
//        reduce; state "window-contents" in TimeWindow namespaces) -> sink-window
// User types live in SavepointPojo.java, SavepointColor.java and SavepointOpaque.java.

import java.io.File;
import java.io.IOException;
import java.io.Serializable;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.AppendingState;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.functions.source.legacy.RichSourceFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;

public class SavepointJob {

    static final long WINDOW_SIZE = 3_600_000L;
    static final long TTL_MS = 86_400_000L;
    static final long EVENT_TIMER_BASE = 1_000_000_000_000L;
    static final long PROCESSING_TIMER_DELAY = 86_400_000L;
    static final String EVENT_USER_TIMERS = "_timer_state/event_user-timers";
    static final String PROCESSING_USER_TIMERS = "_timer_state/processing_user-timers";
    static final String EVENT_WINDOW_TIMERS = "_timer_state/event_window-timers";
    static final String PROCESSING_WINDOW_TIMERS = "_timer_state/processing_window-timers";

    // ------------------------------------------------------------------ JSON

    static String json(Object v) {
        StringBuilder sb = new StringBuilder();
        writeJson(sb, v);
        return sb.toString();
    }

    @SuppressWarnings("unchecked")
    static void writeJson(StringBuilder sb, Object v) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof String) {
            sb.append('"');
            String s = (String) v;
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '"' || c == '\\') {
                    sb.append('\\').append(c);
                } else if (c < 0x20 || c > 0x7e) {
                    sb.append(String.format("\\u%04x", (int) c));
                } else {
                    sb.append(c);
                }
            }
            sb.append('"');
        } else if (v instanceof Boolean || v instanceof Long || v instanceof Integer) {
            sb.append(v);
        } else if (v instanceof Map) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) {
                if (!first) {
                    sb.append(", ");
                }
                first = false;
                writeJson(sb, e.getKey());
                sb.append(": ");
                writeJson(sb, e.getValue());
            }
            sb.append('}');
        } else if (v instanceof List) {
            sb.append('[');
            boolean first = true;
            for (Object o : (List<Object>) v) {
                if (!first) {
                    sb.append(", ");
                }
                first = false;
                writeJson(sb, o);
            }
            sb.append(']');
        } else {
            throw new IllegalArgumentException("not a JSON value: " + v.getClass());
        }
    }

    static Map<String, Object> obj(Object... pairs) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put((String) pairs[i], pairs[i + 1]);
        }
        return m;
    }

    static String hex(byte[] bytes) {
        StringBuilder sb = new StringBuilder();
        for (byte b : bytes) {
            sb.append(String.format("%02x", b & 0xff));
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------ rendering of values

    /** A Java value as JSON (documented in tests/flink/savepoints.py). */
    static Object render(Object v) {
        if (v == null || v instanceof VoidNamespace) {
            return null;
        }
        if (v instanceof String || v instanceof Boolean) {
            return v;
        }
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v instanceof Double) {
            return obj("f64", String.format("%016x", Double.doubleToRawLongBits((Double) v)));
        }
        if (v instanceof Float) {
            return obj("f32", String.format("%08x", Float.floatToRawIntBits((Float) v)));
        }
        if (v instanceof byte[]) {
            return obj("bytes", hex((byte[]) v));
        }
        if (v instanceof Enum) {
            return ((Enum<?>) v).name();
        }
        if (v instanceof Tuple) {
            Tuple t = (Tuple) v;
            List<Object> out = new ArrayList<>();
            for (int i = 0; i < t.getArity(); i++) {
                out.add(render(t.getField(i)));
            }
            return out;
        }
        if (v instanceof Row) {
            Row r = (Row) v;
            List<Object> fields = new ArrayList<>();
            for (int i = 0; i < r.getArity(); i++) {
                fields.add(render(r.getField(i)));
            }
            return obj("row_kind", r.getKind().name(), "fields", fields);
        }
        if (v instanceof TimeWindow) {
            TimeWindow w = (TimeWindow) v;
            return obj("start", w.getStart(), "end", w.getEnd());
        }
        if (v instanceof Iterable) {
            List<Object> out = new ArrayList<>();
            for (Object o : (Iterable<?>) v) {
                out.add(render(o));
            }
            return out;
        }
        if (v instanceof SavepointOpaque) {
            return obj("opaque", true, "class", v.getClass().getName());
        }
        // A POJO: its public instance fields by name.
        Map<String, Object> fields = new TreeMap<>();
        for (Field f : v.getClass().getFields()) {
            if (!Modifier.isStatic(f.getModifiers())) {
                try {
                    fields.put(f.getName(), render(f.get(v)));
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return new LinkedHashMap<>(fields);
    }

    /** A value that only its serializer can describe (Kryo): class and the serializer's bytes. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static Object renderOpaque(Object v, TypeSerializer serializer) {
        if (v == null) {
            return null;
        }
        DataOutputSerializer out = new DataOutputSerializer(64);
        try {
            serializer.serialize(v, out);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return obj("opaque", true, "class", v.getClass().getName(), "bytes", hex(out.getCopyOfBuffer()));
    }

    // ------------------------------------------------------------------ cases and keys

    static final class CaseConfig implements Serializable {
        String name;
        String backend = "hashmap";
        String storage = "jobmanager";
        boolean compression = false;
        int maxp = 128;
        int p = 1;
        String key = "string";
        /** Extra keys for benchmarks: each gets a "count" value and one "amounts" map entry,
         *  left out of expected.json (which then describes the case's own keys only). */
        long bulk = 0;
        /** Which state the bulk keys fill: "count" (a count value and an amounts entry) or "pojo". */
        String bulkState = "count";

        Map<String, Object> toJson() {
            Map<String, Object> out = obj("backend", backend, "storage", storage, "compression", compression,
                    "max_parallelism", (long) maxp, "parallelism", (long) p, "key_type", keyTypeName(key));
            if (bulk > 0) {
                out.put("bulk", bulk);
                out.put("bulk_state", bulkState);
            }
            return out;
        }
    }

    static CaseConfig parseOptions(String name, List<String> options) {
        CaseConfig c = new CaseConfig();
        c.name = name;
        for (String option : options) {
            if (option.isEmpty()) {
                continue;
            }
            int eq = option.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("option without '=': " + option);
            }
            String k = option.substring(0, eq);
            String v = option.substring(eq + 1);
            switch (k) {
                case "backend": c.backend = v; break;
                case "storage": c.storage = v; break;
                case "compression": c.compression = Boolean.parseBoolean(v); break;
                case "maxp": c.maxp = Integer.parseInt(v); break;
                case "p": c.p = Integer.parseInt(v); break;
                case "key": c.key = v; break;
                case "bulk": c.bulk = Long.parseLong(v); break;
                case "bulkstate": c.bulkState = v; break;
                default:
                    if (!k.startsWith("state.") && !k.startsWith("ttl.") && !k.startsWith("skip.")) {
                        throw new IllegalArgumentException("unknown option " + k);
                    }
            }
        }
        if (!c.backend.equals("hashmap") && !c.backend.equals("rocksdb")) {
            throw new IllegalArgumentException("backend must be hashmap or rocksdb, got " + c.backend);
        }
        if (!c.storage.equals("jobmanager") && !c.storage.equals("files")) {
            throw new IllegalArgumentException("storage must be jobmanager or files, got " + c.storage);
        }
        if (!c.bulkState.equals("count") && !c.bulkState.equals("pojo")) {
            throw new IllegalArgumentException("bulkstate must be count or pojo, got " + c.bulkState);
        }
        return c;
    }

    /** The string and long parts of the keys, one pair per key index. */
    static final String[] KEY_STRINGS = {
        "alpha", "", "\u00e9\u20ac\uD834\uDD1E", "k3", "a longer key with spaces", "k5", "k6", "k7"};
    static final long[] KEY_LONGS = {
        0L, 1L, -1L, 42L, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 40, -123456789012L};

    static Object keyOf(String kind, String s, long l) {
        switch (kind) {
            case "string": return s;
            case "long": return l;
            case "tuple": return Tuple2.of(s, l);
            default: throw new IllegalArgumentException("key must be string, long or tuple, got " + kind);
        }
    }

    static TypeInformation<?> keyType(String kind) {
        switch (kind) {
            case "string": return Types.STRING;
            case "long": return Types.LONG;
            case "tuple": return Types.TUPLE(Types.STRING, Types.LONG);
            default: throw new IllegalArgumentException("key must be string, long or tuple, got " + kind);
        }
    }

    static String keyTypeName(String kind) {
        return kind.equals("tuple") ? "tuple2<string,long>" : kind;
    }

    /** The record flowing through the job. kind 0: keyed states, 1: window, 2: restore probe. */
    public static class Rec {
        public int kind;
        public int index;
        public int seq;
        public String s;
        public long l;
        public long amount;
        public long ts;

        public Rec() {}

        Rec(int kind, int index, int seq, long amount, long ts) {
            this.kind = kind;
            this.index = index;
            this.seq = seq;
            this.s = KEY_STRINGS[index];
            this.l = KEY_LONGS[index];
            this.amount = amount;
            this.ts = ts;
        }

        /** Bulk record i (kind 3): a key of its own, apart from every case key. */
        static Rec bulk(long i) {
            Rec r = new Rec();
            r.kind = 3;
            r.index = -1;
            r.s = "bulk-" + i;
            r.l = (1L << 50) + i;
            r.amount = i;
            return r;
        }
    }

    /** Every record the write mode emits, in order. */
    static List<Rec> records() {
        List<Rec> out = new ArrayList<>();
        for (int i = 0; i < KEY_STRINGS.length; i++) {
            for (int j = 0; j <= i % 3; j++) {
                out.add(new Rec(0, i, j, 10L * i + j + 1, 1000L * i + j));
                // Two windows for keys with three records: [0, 1h) and [1h, 2h).
                out.add(new Rec(1, i, j, 100L * i + j, 2_000_000L * j + i));
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ keyed state specs

    static final class StateSpec implements Serializable {
        final String name;
        final String kind;
        final String type;
        final boolean ttl;

        StateSpec(String name, String kind, String type, boolean ttl) {
            this.name = name;
            this.kind = kind;
            this.type = type;
            this.ttl = ttl;
        }
    }

    static List<StateSpec> defaultSpecs() {
        return new ArrayList<>(Arrays.asList(
                new StateSpec("count", "value", "long", false),
                new StateSpec("pojo", "value", "pojo", false),
                new StateSpec("tuple", "value", "tuple2<string,long>", false),
                new StateSpec("row", "value", "row<string,long,double>", false),
                new StateSpec("color", "value", "enum", false),
                new StateSpec("opaque", "value", "kryo", false),
                new StateSpec("names", "list", "string", false),
                new StateSpec("amounts", "map", "long", false),
                new StateSpec("fresh", "value", "long", true),
                new StateSpec("sum", "reducing", "long", false),
                new StateSpec("avg", "aggregating", "tuple2<long,long>", false)));
    }

    static List<StateSpec> specsWith(List<String> options) {
        List<StateSpec> specs = defaultSpecs();
        for (String option : options) {
            int eq = option.indexOf('=');
            String k = option.substring(0, eq);
            String v = option.substring(eq + 1);
            boolean isType = k.startsWith("state.");
            boolean isTtl = k.startsWith("ttl.");
            boolean isSkip = k.startsWith("skip.");
            if (!isType && !isTtl && !isSkip) {
                continue;
            }
            String name = k.substring(k.indexOf('.') + 1);
            boolean found = false;
            for (int i = 0; i < specs.size(); i++) {
                StateSpec old = specs.get(i);
                if (old.name.equals(name) && isSkip) {
                    // Not declared by the restored job: Flink keeps its data without judging it.
                    found = true;
                    specs.remove(i);
                    break;
                }
                if (old.name.equals(name)) {
                    found = true;
                    specs.set(i, isType
                            ? new StateSpec(name, old.kind, v, old.ttl)
                            : new StateSpec(name, old.kind, old.type, v.equals("on")));
                }
            }
            if (!found) {
                throw new IllegalArgumentException("no keyed state named " + name);
            }
        }
        return specs;
    }

    static TypeInformation<?> typeInfo(String type) {
        if (type.startsWith("row<") && type.endsWith(">")) {
            String[] parts = type.substring(4, type.length() - 1).split(",");
            TypeInformation<?>[] fields = new TypeInformation<?>[parts.length];
            for (int i = 0; i < parts.length; i++) {
                fields[i] = typeInfo(parts[i]);
            }
            return Types.ROW(fields);
        }
        switch (type) {
            case "long": return Types.LONG;
            case "int": return Types.INT;
            case "string": return Types.STRING;
            case "double": return Types.DOUBLE;
            case "pojo": return TypeInformation.of(SavepointPojo.class);
            case "tuple2<string,long>": return Types.TUPLE(Types.STRING, Types.LONG);
            case "tuple2<long,long>": return Types.TUPLE(Types.LONG, Types.LONG);
            case "enum": return Types.ENUM(SavepointColor.class);
            case "kryo": return TypeInformation.of(SavepointOpaque.class);
            default: throw new IllegalArgumentException("unknown state type " + type);
        }
    }

    /** The value the write mode puts into a state of the default specs for record j of key i. */
    static Object valueFor(String state, Rec r, long runningTotal) {
        int i = r.index;
        int j = r.seq;
        switch (state) {
            case "count": return (long) (j + 1);
            case "pojo": return new SavepointPojo("p" + i, runningTotal, r.amount / 3.0, i % 2 == 0 ? null : i * 10 + j);
            case "tuple": return Tuple2.of(r.s, runningTotal);
            case "row": return Row.ofKind(j % 2 == 1 ? RowKind.UPDATE_AFTER : RowKind.INSERT,
                    i % 4 == 3 ? null : r.s, r.amount, i == 5 ? -0.0d : r.amount * 0.1d);
            case "color": return SavepointColor.values()[(i + j) % 3];
            case "opaque": return i % 2 == 0 ? new SavepointOpaque("o" + i, r.amount) : null;
            case "names": return "n" + i + "-" + j;
            case "fresh": return r.amount;
            case "sum": return r.amount;
            case "avg": return r.amount;
            default: throw new IllegalArgumentException(state);
        }
    }

    // ------------------------------------------------------------------ what the job did

    /** uid -> json(key) -> entries of that key (keyed states read back after the last update). */
    static final Map<String, Map<String, List<Map<String, Object>>>> KEYED = new ConcurrentHashMap<>();
    /** uid -> state -> subtask -> elements, captured when the savepoint snapshots them. */
    static final Map<String, Map<String, Map<Integer, List<Object>>>> OPERATOR = new ConcurrentHashMap<>();
    /** Timers registered by keyed-states: json(entry) -> entry. */
    static final Map<String, Map<String, Object>> TIMERS = new ConcurrentHashMap<>();
    /** Restore mode: what the operators read, in order. */
    static final List<Map<String, Object>> READ = Collections.synchronizedList(new ArrayList<>());
    static volatile CountDownLatch emitted = new CountDownLatch(1);
    static final AtomicLong KEYED_SEEN = new AtomicLong();
    static final AtomicLong OPSTATE_SEEN = new AtomicLong();
    static final AtomicLong BULK_SEEN = new AtomicLong();

    static void reset() {
        KEYED.clear();
        OPERATOR.clear();
        TIMERS.clear();
        READ.clear();
        emitted = new CountDownLatch(1);
        KEYED_SEEN.set(0);
        OPSTATE_SEEN.set(0);
        BULK_SEEN.set(0);
    }

    static void recordOperatorState(String uid, String state, int subtask, Iterable<?> elements) {
        List<Object> values = new ArrayList<>();
        for (Object e : elements) {
            values.add(render(e));
        }
        OPERATOR.computeIfAbsent(uid, u -> new ConcurrentHashMap<>())
                .computeIfAbsent(state, s -> new ConcurrentHashMap<>())
                .put(subtask, values);
    }

    static void readOperatorState(String uid, String state, int subtask, Iterable<?> elements) {
        for (Object e : elements) {
            READ.add(obj("uid", uid, "state", state, "subtask", (long) subtask, "value", render(e)));
        }
    }

    // ------------------------------------------------------------------ operators

    /** Emits the records (write mode) or one probe per key (restore mode). */
    static final class Source extends RichSourceFunction<Rec> implements CheckpointedFunction {
        final boolean restore;
        final long bulk;
        /** Emit nothing and run until cancelled (the remigrate mode). */
        final boolean hold;
        volatile boolean running = true;
        transient ListState<Long> emittedState;
        long count;

        Source(boolean restore, long bulk, boolean hold) {
            this.restore = restore;
            this.bulk = bulk;
            this.hold = hold;
        }

        @Override
        public void initializeState(FunctionInitializationContext context) throws Exception {
            emittedState = context.getOperatorStateStore().getListState(
                    new ListStateDescriptor<>("emitted", Types.LONG));
            if (context.isRestored()) {
                readOperatorState("source", "emitted", getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                        emittedState.get());
            }
        }

        @Override
        public void snapshotState(FunctionSnapshotContext context) throws Exception {
            emittedState.update(Collections.singletonList(count));
            recordOperatorState("source", "emitted", getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                    emittedState.get());
        }

        @Override
        public void run(SourceContext<Rec> ctx) throws Exception {
            if (hold) {
                while (running) {
                    Thread.sleep(20);
                }
                return;
            }
            if (restore) {
                synchronized (ctx.getCheckpointLock()) {
                    for (int i = 0; i < KEY_STRINGS.length; i++) {
                        ctx.collect(new Rec(2, i, 0, 0L, 0L));
                    }
                }
                return; // finishing emits the final watermark: timers and windows fire
            }
            synchronized (ctx.getCheckpointLock()) {
                for (Rec r : records()) {
                    ctx.collectWithTimestamp(r, r.ts);
                    count++;
                }
                for (long i = 0; i < bulk; i++) {
                    ctx.collectWithTimestamp(Rec.bulk(i), 0L);
                    count++;
                }
            }
            emitted.countDown();
            while (running) {
                Thread.sleep(20);
            }
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    /** Non-keyed operator with a split list state and a union list state. */
    static final class Seen extends RichMapFunction<Rec, Rec> implements CheckpointedFunction {
        transient ListState<String> split;
        transient ListState<Long> union;
        final List<String> seen = new ArrayList<>();

        @Override
        public void initializeState(FunctionInitializationContext context) throws Exception {
            split = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("seen-split", Types.STRING));
            union = context.getOperatorStateStore().getUnionListState(new ListStateDescriptor<>("seen-union", Types.LONG));
            if (context.isRestored()) {
                int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
                readOperatorState("opstate", "seen-split", subtask, split.get());
                if (subtask == 0) { // every subtask gets the whole union list
                    readOperatorState("opstate", "seen-union", subtask, union.get());
                }
            }
        }

        @Override
        public Rec map(Rec r) {
            if (r.kind != 2 && r.kind != 3) {
                seen.add("r" + r.kind + "-" + r.index + "-" + r.seq);
                OPSTATE_SEEN.incrementAndGet();
            }
            return r;
        }

        @Override
        public void snapshotState(FunctionSnapshotContext context) throws Exception {
            int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            split.update(new ArrayList<>(seen));
            union.update(Collections.singletonList(1000L * subtask + seen.size()));
            recordOperatorState("opstate", "seen-split", subtask, split.get());
            recordOperatorState("opstate", "seen-union", subtask, union.get());
        }
    }

    /** The keyed states: written from records (write mode), read for probes (restore mode). */
    static final class States extends KeyedProcessFunction<Object, Rec, Rec> {
        final List<StateSpec> specs;
        final int maxp;
        final boolean nullMapValues;
        final boolean bulkPojo;
        transient Map<String, Object> states;
        transient Map<String, TypeSerializer<?>> serializers;

        States(List<StateSpec> specs, int maxp, boolean nullMapValues, boolean bulkPojo) {
            this.specs = specs;
            this.maxp = maxp;
            this.nullMapValues = nullMapValues;
            this.bulkPojo = bulkPojo;
        }

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        public void open(OpenContext openContext) {
            states = new LinkedHashMap<>();
            serializers = new LinkedHashMap<>();
            for (StateSpec spec : specs) {
                TypeInformation type = typeInfo(spec.type);
                StateDescriptor desc;
                switch (spec.kind) {
                    case "value": desc = new ValueStateDescriptor(spec.name, type); break;
                    case "list": desc = new ListStateDescriptor(spec.name, type); break;
                    case "map": desc = new MapStateDescriptor(spec.name, Types.STRING, type); break;
                    case "reducing": desc = new ReducingStateDescriptor(spec.name, (ReduceFunction<Long>) Long::sum, type); break;
                    case "aggregating": desc = new AggregatingStateDescriptor(spec.name, new SumCount(), type); break;
                    default: throw new IllegalArgumentException(spec.kind);
                }
                if (spec.ttl) {
                    desc.enableTimeToLive(StateTtlConfig.newBuilder(Duration.ofMillis(TTL_MS))
                            .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
                            .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
                            .build());
                }
                Object state;
                switch (spec.kind) {
                    case "value": state = getRuntimeContext().getState((ValueStateDescriptor) desc); break;
                    case "list": state = getRuntimeContext().getListState((ListStateDescriptor) desc); break;
                    case "map": state = getRuntimeContext().getMapState((MapStateDescriptor) desc); break;
                    case "reducing": state = getRuntimeContext().getReducingState((ReducingStateDescriptor) desc); break;
                    default: state = getRuntimeContext().getAggregatingState((AggregatingStateDescriptor) desc); break;
                }
                states.put(spec.name, state);
                if (spec.type.equals("kryo")) {
                    serializers.put(spec.name, getRuntimeContext().createSerializer(type));
                }
            }
        }

        Map<String, Object> entry(Object key, String state) {
            return obj("uid", "keyed-states", "state", state, "key", render(key),
                    "key_group", (long) KeyGroupRangeAssignment.assignToKeyGroup(key, maxp), "namespace", null);
        }

        Object renderValue(String state, Object value) {
            TypeSerializer<?> kryo = serializers.get(state);
            return kryo != null ? renderOpaque(value, kryo) : render(value);
        }

        /** Every keyed state of the current key, as entries. */
        List<Map<String, Object>> readAll(Object key) throws Exception {
            List<Map<String, Object>> out = new ArrayList<>();
            for (StateSpec spec : specs) {
                Object state = states.get(spec.name);
                switch (spec.kind) {
                    case "value": {
                        Object v = ((ValueState<?>) state).value();
                        if (v != null) {
                            Map<String, Object> e = entry(key, spec.name);
                            e.put("value", renderValue(spec.name, v));
                            out.add(e);
                        }
                        break;
                    }
                    case "reducing":
                    case "aggregating": {
                        Object v = ((AppendingState<?, ?>) state).get();
                        if (v != null) {
                            Map<String, Object> e = entry(key, spec.name);
                            e.put("value", renderValue(spec.name, v));
                            out.add(e);
                        }
                        break;
                    }
                    case "list": {
                        List<Object> values = new ArrayList<>();
                        Iterable<?> got = ((ListState<?>) state).get();
                        if (got != null) {
                            for (Object o : got) {
                                values.add(renderValue(spec.name, o));
                            }
                        }
                        if (!values.isEmpty()) {
                            Map<String, Object> e = entry(key, spec.name);
                            e.put("value", values);
                            out.add(e);
                        }
                        break;
                    }
                    default: {
                        List<Map<String, Object>> entries = new ArrayList<>();
                        for (Map.Entry<String, ?> me : ((MapState<String, ?>) state).entries()) {
                            Map<String, Object> e = entry(key, spec.name);
                            e.put("user_key", me.getKey());
                            e.put("value", renderValue(spec.name, me.getValue()));
                            entries.add(e);
                        }
                        entries.sort(Comparator.comparing(e -> (String) e.get("user_key")));
                        out.addAll(entries);
                    }
                }
            }
            return out;
        }

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        public void processElement(Rec r, Context ctx, Collector<Rec> out) throws Exception {
            Object key = ctx.getCurrentKey();
            if (r.kind == 2) {
                READ.addAll(readAll(key));
                return;
            }
            if (r.kind == 3) {
                if (bulkPojo) {
                    ((ValueState<SavepointPojo>) states.get("pojo")).update(
                            new SavepointPojo(r.s, r.amount, r.amount / 4.0, (int) (r.amount % 1000)));
                } else {
                    ((ValueState<Long>) states.get("count")).update(r.amount);
                    ((MapState<String, Long>) states.get("amounts")).put("b", r.amount);
                }
                BULK_SEEN.incrementAndGet();
                return;
            }
            long running = 0;
            Long sum = ((ReducingState<Long>) states.get("sum")).get();
            running = (sum == null ? 0 : sum) + r.amount;
            long before = 0;
            long after = 0;
            for (StateSpec spec : specs) {
                Object state = states.get(spec.name);
                if (spec.name.equals("amounts")) {
                    MapState<String, Long> map = (MapState<String, Long>) state;
                    map.put("m" + r.seq, r.amount);
                    if (r.index % 4 == 0) {
                        map.put("zero", 0L);
                        // RocksDB only: Flink 2.3's heap backend fails a canonical savepoint holding
                        // a null map value (NullPointerException in HeapKeyValueStateIterator).
                        if (nullMapValues) {
                            map.put("none", null);
                        }
                    }
                    continue;
                }
                Object v = valueFor(spec.name, r, running);
                if (spec.ttl) {
                    before = System.currentTimeMillis();
                }
                switch (spec.kind) {
                    case "value": {
                        if (v != null) {
                            ((ValueState) state).update(v);
                        }
                        break;
                    }
                    case "list": ((ListState) state).add(v); break;
                    default: ((AppendingState) state).add(v); break;
                }
                if (spec.ttl) {
                    after = System.currentTimeMillis();
                }
            }
            long eventTimer = EVENT_TIMER_BASE + 1000L * r.index + r.seq;
            ctx.timerService().registerEventTimeTimer(eventTimer);
            Map<String, Object> te = entry(key, EVENT_USER_TIMERS);
            te.put("timestamp", eventTimer);
            TIMERS.put(json(te), te);
            if (r.seq == 0) {
                long processingTimer = ctx.timerService().currentProcessingTime() + PROCESSING_TIMER_DELAY;
                ctx.timerService().registerProcessingTimeTimer(processingTimer);
                Map<String, Object> pe = entry(key, PROCESSING_USER_TIMERS);
                pe.put("timestamp", processingTimer);
                TIMERS.put(json(pe), pe);
            }
            List<Map<String, Object>> entries = readAll(key);
            for (Map<String, Object> e : entries) {
                if (e.get("state").equals("fresh")) {
                    e.put("ttl_last_access", Arrays.asList((Object) before, (Object) after));
                }
            }
            KEYED.computeIfAbsent("keyed-states", u -> new ConcurrentHashMap<>()).put(json(render(key)), entries);
            KEYED_SEEN.incrementAndGet();
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<Rec> out) {
            Map<String, Object> e = entry(ctx.getCurrentKey(), ctx.timeDomain().name().equals("EVENT_TIME")
                    ? EVENT_USER_TIMERS : PROCESSING_USER_TIMERS);
            e.put("timestamp", timestamp);
            READ.add(e);
        }
    }

    /** Aggregates longs into (sum, count); its result is the accumulator, so reading the state
     * gives exactly what is stored. */
    static final class SumCount implements AggregateFunction<Long, Tuple2<Long, Long>, Tuple2<Long, Long>> {
        @Override
        public Tuple2<Long, Long> createAccumulator() {
            return Tuple2.of(0L, 0L);
        }

        @Override
        public Tuple2<Long, Long> add(Long value, Tuple2<Long, Long> acc) {
            return Tuple2.of(acc.f0 + value, acc.f1 + 1);
        }

        @Override
        public Tuple2<Long, Long> getResult(Tuple2<Long, Long> acc) {
            return acc;
        }

        @Override
        public Tuple2<Long, Long> merge(Tuple2<Long, Long> a, Tuple2<Long, Long> b) {
            return Tuple2.of(a.f0 + b.f0, a.f1 + b.f1);
        }
    }

    static final class WindowSum implements ReduceFunction<Tuple2<String, Long>> {
        @Override
        public Tuple2<String, Long> reduce(Tuple2<String, Long> a, Tuple2<String, Long> b) {
            return Tuple2.of(a.f0, a.f1 + b.f1);
        }
    }

    /** Fires only in restore mode (at the final watermark): reports what the window held. */
    static final class WindowRead extends ProcessWindowFunction<Tuple2<String, Long>, Tuple2<String, Long>, String, TimeWindow> {
        final int maxp;

        WindowRead(int maxp) {
            this.maxp = maxp;
        }

        @Override
        public void process(String key, Context context, Iterable<Tuple2<String, Long>> elements,
                Collector<Tuple2<String, Long>> out) {
            long group = KeyGroupRangeAssignment.assignToKeyGroup(key, maxp);
            for (Tuple2<String, Long> t : elements) {
                READ.add(obj("uid", "window", "state", "window-contents", "key", key, "key_group", group,
                        "namespace", render(context.window()), "value", render(t)));
            }
            READ.add(obj("uid", "window", "state", EVENT_WINDOW_TIMERS, "key", key, "key_group", group,
                    "namespace", render(context.window()), "timestamp", context.window().maxTimestamp()));
        }
    }

    // ------------------------------------------------------------------ the job

    static StreamExecutionEnvironment environment(CaseConfig c, File checkpoints, String restorePath) {
        Configuration conf = new Configuration();
        conf.setString("state.backend.type", c.backend);
        if (c.storage.equals("files")) {
            conf.setString("execution.checkpointing.storage", "filesystem");
            conf.setString("execution.checkpointing.dir", checkpoints.toURI().toString());
            conf.setString("execution.checkpointing.data-inline-threshold", "0");
        } else {
            conf.setString("execution.checkpointing.storage", "jobmanager");
        }
        conf.setString("execution.checkpointing.snapshot-compression", Boolean.toString(c.compression));
        conf.setString("restart-strategy.type", "none");
        conf.setString("rest.bind-port", "0");
        if (restorePath != null) {
            conf.setString("execution.state-recovery.path", restorePath);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(c.p, conf);
        env.setMaxParallelism(c.maxp);
        return env;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static void build(StreamExecutionEnvironment env, CaseConfig c, boolean restore, List<StateSpec> specs) {
        build(env, c, restore, specs, false);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static void build(StreamExecutionEnvironment env, CaseConfig c, boolean restore, List<StateSpec> specs, boolean hold) {
        String keyKind = c.key;
        DataStream<Rec> source = env.addSource(new Source(restore, restore ? 0 : c.bulk, hold), "source",
                        TypeInformation.of(Rec.class))
                .uid("source").name("source").setParallelism(1);
        DataStream<Rec> seen = source.map(new Seen()).uid("opstate").name("opstate");
        KeySelector<Rec, Object> selector = r -> keyOf(keyKind, r.s, r.l);
        seen.filter(r -> r.kind != 1).uid("states-input").name("states-input")
                .keyBy(selector, (TypeInformation) keyType(keyKind))
                .process(new States(specs, c.maxp, c.backend.equals("rocksdb"), c.bulkState.equals("pojo")))
                .uid("keyed-states").name("keyed-states")
                .sinkTo(new DiscardingSink<>()).uid("sink-states").name("sink-states");
        seen.filter(r -> r.kind == 1).uid("window-filter").name("window-filter")
                .map(r -> Tuple2.of(r.s, r.amount)).returns(Types.TUPLE(Types.STRING, Types.LONG))
                .uid("window-input").name("window-input")
                .keyBy(t -> t.f0, Types.STRING)
                .window(TumblingEventTimeWindows.of(Duration.ofMillis(WINDOW_SIZE)))
                .reduce(new WindowSum(), new WindowRead(c.maxp), Types.TUPLE(Types.STRING, Types.LONG))
                .uid("window").name("window")
                .sinkTo(new DiscardingSink<>()).uid("sink-window").name("sink-window");
    }

    // ------------------------------------------------------------------ write mode

    static void await(String what, java.util.function.BooleanSupplier done, long timeoutMs) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (!done.getAsBoolean()) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("timed out waiting for " + what);
            }
            Thread.sleep(20);
        }
    }

    /** Waits for done() while the job runs; a job that ended meanwhile fails with its error. */
    static void awaitRunning(JobClient client, String what, java.util.function.BooleanSupplier done) throws Exception {
        long deadline = System.currentTimeMillis() + 300_000;
        while (!done.getAsBoolean()) {
            if (client.getJobStatus().get().isGloballyTerminalState()) {
                client.getJobExecutionResult().get(); // throws the job's failure
                throw new IllegalStateException("the job ended before " + what + " went through");
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("timed out after 300 s waiting for " + what);
            }
            Thread.sleep(20);
        }
    }

    static Map<String, Object> stateJson(String kind, String type, String namespace, Long ttlMs, List<Map<String, Object>> entries) {
        return obj("kind", kind, "type", type, "namespace", namespace, "ttl_ms", ttlMs, "entries", entries);
    }

    static Map<String, Object> operatorJson(String name, long parallelism, long maxp, String keyType) {
        return obj("name", name, "parallelism", parallelism, "max_parallelism", maxp,
                "keyed", keyType != null, "key_type", keyType, "states", new LinkedHashMap<String, Object>());
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> expected(CaseConfig c, String savepointName) {
        Map<String, Object> operators = new LinkedHashMap<>();

        // Flink names a legacy source "Source: <name>" (the name _metadata holds).
        Map<String, Object> source = operatorJson("Source: source", 1, c.maxp, null);
        operators.put("source", source);
        Map<String, Object> opstate = operatorJson("opstate", c.p, c.maxp, null);
        operators.put("opstate", opstate);
        for (String uid : Arrays.asList("source", "opstate")) {
            Map<String, Object> states = (Map<String, Object>) ((Map<String, Object>) operators.get(uid)).get("states");
            Map<String, Map<Integer, List<Object>>> recorded = OPERATOR.getOrDefault(uid, Collections.emptyMap());
            for (String state : new TreeMap<>(recorded).keySet()) {
                List<Map<String, Object>> entries = new ArrayList<>();
                for (Map.Entry<Integer, List<Object>> e : new TreeMap<>(recorded.get(state)).entrySet()) {
                    for (Object v : e.getValue()) {
                        entries.add(obj("subtask", (long) e.getKey(), "value", v));
                    }
                }
                String type = state.equals("seen-split") ? "string" : "long";
                String kind = state.equals("seen-union") ? "operator_union_list" : "operator_list";
                states.put(state, stateJson(kind, type, null, null, entries));
            }
        }

        Map<String, Object> keyed = operatorJson("keyed-states", c.p, c.maxp, keyTypeName(c.key));
        operators.put("keyed-states", keyed);
        Map<String, Object> keyedStates = (Map<String, Object>) keyed.get("states");
        List<Map<String, Object>> all = new ArrayList<>();
        for (List<Map<String, Object>> entries : KEYED.getOrDefault("keyed-states", Collections.emptyMap()).values()) {
            all.addAll(entries);
        }
        all.sort(Comparator.comparing(SavepointJob::json));
        for (StateSpec spec : defaultSpecs()) {
            List<Map<String, Object>> entries = new ArrayList<>();
            for (Map<String, Object> e : all) {
                if (e.get("state").equals(spec.name)) {
                    Map<String, Object> copy = new LinkedHashMap<>(e);
                    copy.remove("uid");
                    copy.remove("state");
                    entries.add(copy);
                }
            }
            keyedStates.put(spec.name, stateJson(spec.kind, spec.type, "void", spec.ttl ? TTL_MS : null, entries));
        }
        for (String timers : Arrays.asList(EVENT_USER_TIMERS, PROCESSING_USER_TIMERS)) {
            List<Map<String, Object>> entries = new ArrayList<>();
            for (Map<String, Object> e : TIMERS.values()) {
                if (e.get("state").equals(timers)) {
                    Map<String, Object> copy = new LinkedHashMap<>(e);
                    copy.remove("uid");
                    copy.remove("state");
                    entries.add(copy);
                }
            }
            entries.sort(Comparator.comparing(SavepointJob::json));
            keyedStates.put(timers, stateJson("timer", "timer", "void", null, entries));
        }

        // The window operator's state, from the records (the window's reduce sums amounts).
        Map<String, Object> window = operatorJson("window", c.p, c.maxp, "string");
        operators.put("window", window);
        Map<String, Object> windowStates = (Map<String, Object>) window.get("states");
        Map<String, Object[]> sums = new TreeMap<>(); // json([key, start]) -> {key, start, sum}
        for (Rec r : records()) {
            if (r.kind == 1) {
                long start = TimeWindow.getWindowStartWithOffset(r.ts, 0, WINDOW_SIZE);
                Object[] acc = sums.computeIfAbsent(json(Arrays.asList((Object) r.s, (Object) start)),
                        k -> new Object[] {r.s, start, 0L});
                acc[2] = (Long) acc[2] + r.amount;
            }
        }
        List<Map<String, Object>> contents = new ArrayList<>();
        List<Map<String, Object>> windowTimers = new ArrayList<>();
        for (Object[] acc : sums.values()) {
            String key = (String) acc[0];
            long start = (Long) acc[1];
            TimeWindow w = new TimeWindow(start, start + WINDOW_SIZE);
            long group = KeyGroupRangeAssignment.assignToKeyGroup(key, c.maxp);
            contents.add(obj("key", key, "key_group", group, "namespace", render(w),
                    "value", render(Tuple2.of(key, (Long) acc[2]))));
            windowTimers.add(obj("key", key, "key_group", group, "namespace", render(w),
                    "timestamp", w.maxTimestamp()));
        }
        windowStates.put("window-contents", stateJson("reducing", "tuple2<string,long>", "time_window", null, contents));
        windowStates.put(EVENT_WINDOW_TIMERS, stateJson("timer", "timer", "time_window", null, windowTimers));
        windowStates.put(PROCESSING_WINDOW_TIMERS, stateJson("timer", "timer", "time_window", null, new ArrayList<>()));

        Map<String, Object> skipped = obj("avro", "the Avro format (org.apache.avro, flink-avro) is not in "
                + "apache-flink-libraries' jars, so no GenericRecord state is written");
        return obj("format", 1L, "case", c.name, "flink_version", EnvironmentInformation.getVersion(),
                "config", c.toJson(), "savepoint", savepointName, "skipped", skipped, "operators", operators);
    }

    /**
     * A canonical savepoint of the running job. Flink refuses to trigger one while a subtask is
     * still being deployed ("Not all required tasks are currently running"), which a loaded
     * machine shows even after every record was processed: that refusal is retried for up to
     * two minutes; any other failure is reported at once.
     */
    static String triggerSavepoint(JobClient client, File dir) throws Exception {
        long deadline = System.currentTimeMillis() + 120_000;
        while (true) {
            try {
                return client.triggerSavepoint(dir.toURI().toString(), SavepointFormatType.CANONICAL)
                        .get(300, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                boolean starting = false;
                for (Throwable t = e; t != null; t = t.getCause()) {
                    String message = String.valueOf(t.getMessage());
                    starting |= message.contains("Not all required tasks are currently running")
                            || message.contains("is not being executed at the moment");
                }
                if (!starting || System.currentTimeMillis() > deadline) {
                    throw e;
                }
                Thread.sleep(500);
            }
        }
    }

    static void write(File out, List<String> caseArgs) throws Exception {
        File checkpoints = new File(out, ".checkpoints");
        for (String arg : caseArgs) {
            int colon = arg.indexOf(':');
            String name = colon < 0 ? arg : arg.substring(0, colon);
            List<String> options = colon < 0 ? new ArrayList<>() : Arrays.asList(arg.substring(colon + 1).split(","));
            CaseConfig c = parseOptions(name, options);
            long started = System.currentTimeMillis();
            reset();
            File dir = new File(out, name);
            dir.mkdirs();
            StreamExecutionEnvironment env = environment(c, checkpoints, null);
            build(env, c, false, defaultSpecs());
            JobClient client = env.executeAsync("savepoint-job-" + name);
            try {
                long stateRecords = records().stream().filter(r -> r.kind == 0).count();
                long allRecords = records().size();
                awaitRunning(client, "the records of case " + name, () -> emitted.getCount() == 0
                        && KEYED_SEEN.get() == stateRecords && OPSTATE_SEEN.get() == allRecords
                        && BULK_SEEN.get() == c.bulk);
                String path = triggerSavepoint(client, dir);
                String savepointName = new File(new java.net.URI(path).getPath()).getName();
                Files.write(new File(dir, "expected.json").toPath(),
                        (json(expected(c, savepointName)) + "\n").getBytes(StandardCharsets.UTF_8));
            } finally {
                try {
                    client.cancel().get(300, TimeUnit.SECONDS);
                } catch (Exception e) {
                    // The job is over already (it failed): the error that ended it is reported.
                }
                await("the end of case " + name, () -> {
                    try {
                        return client.getJobStatus().get().isGloballyTerminalState();
                    } catch (Exception e) {
                        return true; // the cluster is gone: the job is over
                    }
                }, 300_000);
            }
            System.out.println("wrote case " + name + " in " + (System.currentTimeMillis() - started) + " ms");
        }
    }

    // ------------------------------------------------------------------ restore mode

    static Map<String, Object> describe(Throwable t) {
        List<Object> chain = new ArrayList<>();
        boolean migration = false;
        for (Throwable at = t; at != null; at = at.getCause() == at ? null : at.getCause()) {
            chain.add(obj("class", at.getClass().getName(), "message", String.valueOf(at.getMessage())));
            if (at.getClass().getName().endsWith("StateMigrationException")) {
                migration = true;
            }
            if (chain.size() > 30) {
                break;
            }
        }
        return obj("state_migration_exception", migration, "chain", chain);
    }

    static void restore(File requests, File results) throws Exception {
        List<String> lines = Files.readAllLines(requests.toPath(), StandardCharsets.UTF_8);
        File checkpoints = Files.createTempDirectory("savepoint-restore").toFile();
        StringBuilder out = new StringBuilder();
        for (String line : lines) {
            if (line.trim().isEmpty()) {
                continue;
            }
            List<String> parts = new ArrayList<>(Arrays.asList(line.trim().split(" ")));
            String request = parts.remove(0);
            String savepoint = parts.remove(0);
            long started = System.currentTimeMillis();
            reset();
            Map<String, Object> verdict;
            try {
                CaseConfig c = parseOptions(request, parts);
                List<StateSpec> specs = specsWith(parts);
                StreamExecutionEnvironment env = environment(c, checkpoints, savepoint);
                build(env, c, true, specs);
                JobClient client = env.executeAsync("savepoint-restore-" + request);
                client.getJobExecutionResult().get(300, TimeUnit.SECONDS);
                verdict = obj("request", request, "verdict", "restored");
            } catch (Throwable t) {
                verdict = obj("request", request, "verdict", "failed", "error", describe(t));
            }
            List<Map<String, Object>> read;
            synchronized (READ) {
                read = new ArrayList<>(READ);
            }
            for (Map<String, Object> e : read) {
                Map<String, Object> line2 = new LinkedHashMap<>();
                line2.put("request", request);
                line2.putAll(e);
                out.append(json(line2)).append('\n');
            }
            verdict.put("millis", System.currentTimeMillis() - started);
            out.append(json(verdict)).append('\n');
        }
        Files.write(results.toPath(), out.toString().getBytes(StandardCharsets.UTF_8));
    }

    /** Restores SAVEPOINT (migrating what the new types need) and takes a new savepoint. */
    static void remigrate(String savepoint, File out, List<String> options) throws Exception {
        reset();
        CaseConfig c = parseOptions("remigrate", options);
        List<StateSpec> specs = specsWith(options);
        File checkpoints = Files.createTempDirectory("savepoint-remigrate").toFile();
        StreamExecutionEnvironment env = environment(c, checkpoints, savepoint);
        build(env, c, true, specs, true);
        long started = System.currentTimeMillis();
        JobClient client = env.executeAsync("savepoint-remigrate");
        try {
            out.mkdirs();
            String path = triggerSavepoint(client, out);
            long millis = System.currentTimeMillis() - started;
            System.out.println(json(obj("millis", millis, "savepoint", new java.net.URI(path).getPath())));
        } finally {
            try {
                client.cancel().get(300, TimeUnit.SECONDS);
            } catch (Exception e) {
                // The job is over already (it failed): the error that ended it is reported.
            }
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length >= 2 && args[0].equals("write")) {
            write(new File(args[1]).getAbsoluteFile(), Arrays.asList(args).subList(2, args.length));
        } else if (args.length == 3 && args[0].equals("restore")) {
            restore(new File(args[1]), new File(args[2]));
        } else if (args.length >= 3 && args[0].equals("remigrate")) {
            remigrate(args[1], new File(args[2]).getAbsoluteFile(), Arrays.asList(args).subList(3, args.length));
        } else {
            System.err.println("usage: SavepointJob write OUT_DIR CASE... | SavepointJob restore REQUESTS RESULTS"
                    + " | SavepointJob remigrate SAVEPOINT OUT_DIR OPTION...");
            System.exit(2);
        }
        System.exit(0);
    }
}
