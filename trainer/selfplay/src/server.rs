//! The inference server: one thread per device that owns the networks and answers the search
//! threads' batches, joining the batches waiting in its queue into one forward pass of up to
//! `max_batch` positions. Search threads hold [`ServerEvaluator`]s, whose `submit` returns at
//! once, so a thread prepares its next batch while the device works on this one.
//!
//! Networks are registered with [`InferenceServer::register`] and dropped by the server when
//! the last handle to them goes, so self-play switches networks without stopping.

use search::{Evaluation, Evaluator, EvaluatorError, Request, Ticket};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A network the server can run: any evaluator that may move to the server's thread.
pub type DeviceEvaluator = Box<dyn Evaluator + Send>;

enum Msg {
    Add(u64, DeviceEvaluator),
    Remove(u64),
    Job(Job),
    Stop,
}

struct Job {
    net: Arc<NetKey>,
    req: Request,
    reply: mpsc::Sender<Result<Request, EvaluatorError>>,
}

/// A registered network; the server drops it when the last handle goes.
struct NetKey {
    id: u64,
    tx: mpsc::Sender<Msg>,
}

impl Drop for NetKey {
    fn drop(&mut self) {
        let _ = self.tx.send(Msg::Remove(self.id));
    }
}

/// What the server did, for benchmarks and logs.
#[derive(Debug, Default)]
pub struct ServerStats {
    /// Forward passes.
    pub batches: AtomicU64,
    /// Positions evaluated.
    pub positions: AtomicU64,
    /// Nanoseconds spent evaluating.
    pub busy_nanos: AtomicU64,
}

impl ServerStats {
    /// Mean positions per forward pass.
    pub fn mean_batch(&self) -> f64 {
        self.positions.load(Ordering::Relaxed) as f64
            / self.batches.load(Ordering::Relaxed).max(1) as f64
    }
}

/// One device's inference queue and the thread that serves it.
pub struct InferenceServer {
    tx: mpsc::Sender<Msg>,
    thread: Option<JoinHandle<()>>,
    next_id: AtomicU64,
    /// The server's figures.
    pub stats: Arc<ServerStats>,
    max_batch: usize,
}

impl InferenceServer {
    /// Starts a server whose forward passes hold at most `max_batch` positions (a single
    /// larger batch is still evaluated whole).
    pub fn start(max_batch: usize) -> InferenceServer {
        let (tx, rx) = mpsc::channel();
        let stats = Arc::new(ServerStats::default());
        let st = stats.clone();
        let max = max_batch.max(1);
        let thread = std::thread::Builder::new()
            .name("inference".into())
            .spawn(move || serve(rx, max, &st))
            .expect("spawning the inference thread");
        InferenceServer {
            tx,
            thread: Some(thread),
            next_id: AtomicU64::new(0),
            stats,
            max_batch: max,
        }
    }

    /// The largest forward pass.
    pub fn max_batch(&self) -> usize {
        self.max_batch
    }

    /// Hands a network to the server; the handle (cloned for each search thread) submits
    /// batches to it, and the network is dropped when the last clone goes.
    pub fn register(&self, net: DeviceEvaluator) -> ServerEvaluator {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (input_len, policy_len) = (net.input_len(), net.policy_len());
        let _ = self.tx.send(Msg::Add(id, net));
        ServerEvaluator {
            net: Arc::new(NetKey {
                id,
                tx: self.tx.clone(),
            }),
            input_len,
            policy_len,
        }
    }
}

impl Drop for InferenceServer {
    /// Stops the thread: batches still queued are answered with an error.
    fn drop(&mut self) {
        let _ = self.tx.send(Msg::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A search thread's handle on a network served by an [`InferenceServer`].
#[derive(Clone)]
pub struct ServerEvaluator {
    net: Arc<NetKey>,
    input_len: usize,
    policy_len: usize,
}

impl Evaluator for ServerEvaluator {
    fn input_len(&self) -> usize {
        self.input_len
    }

    fn policy_len(&self) -> usize {
        self.policy_len
    }

    /// Whole policies (every index requested): for callers outside the search.
    fn evaluate(
        &mut self,
        inputs: &[f32],
        batch: usize,
    ) -> Result<Vec<Evaluation>, EvaluatorError> {
        let mut r = Request {
            inputs: inputs.to_vec(),
            ..Request::default()
        };
        for _ in 0..batch {
            r.moves.extend(0..self.policy_len as u32);
            r.end_position();
        }
        let r = self.submit(r)?.wait()?;
        Ok((0..batch)
            .map(|i| Evaluation {
                policy_logits: r.logits[r.range(i)].to_vec(),
                wdl: r.wdl[i],
            })
            .collect())
    }

    fn evaluate_request(&mut self, r: &mut Request) -> Result<(), EvaluatorError> {
        *r = self.submit(std::mem::take(r))?.wait()?;
        Ok(())
    }

    fn submit(&mut self, req: Request) -> Result<Ticket, EvaluatorError> {
        req.check(self.input_len, self.policy_len)?;
        let (reply, rx) = mpsc::channel();
        self.net
            .tx
            .send(Msg::Job(Job {
                net: self.net.clone(),
                req,
                reply,
            }))
            .map_err(|_| EvaluatorError("the inference server stopped".into()))?;
        Ok(Ticket::Pending(rx))
    }
}

fn serve(rx: mpsc::Receiver<Msg>, max_batch: usize, stats: &ServerStats) {
    let mut nets: HashMap<u64, DeviceEvaluator> = HashMap::new();
    let mut queue: VecDeque<Job> = VecDeque::new();
    let mut batch: Vec<Job> = Vec::new();
    let mut requests: Vec<Request> = Vec::new();
    let mut stopping = false;
    // Returns whether the message asks to stop.
    let handle = |m: Msg, nets: &mut HashMap<u64, DeviceEvaluator>, q: &mut VecDeque<Job>| {
        match m {
            Msg::Add(id, net) => {
                nets.insert(id, net);
            }
            Msg::Remove(id) => {
                nets.remove(&id);
            }
            Msg::Job(j) => q.push_back(j),
            Msg::Stop => return true,
        }
        false
    };
    loop {
        if queue.is_empty() && !stopping {
            match rx.recv() {
                Ok(m) => stopping |= handle(m, &mut nets, &mut queue),
                Err(_) => break,
            }
        }
        // Everything already waiting joins this pass.
        while let Ok(m) = rx.try_recv() {
            stopping |= handle(m, &mut nets, &mut queue);
        }
        if stopping {
            for j in queue.drain(..) {
                let _ = j
                    .reply
                    .send(Err(EvaluatorError("the inference server stopped".into())));
            }
            break;
        }
        let Some(first) = queue.front() else {
            continue;
        };
        // The oldest job's network, with its other jobs in order, up to `max_batch`.
        let id = first.net.id;
        let mut n = 0;
        let mut i = 0;
        while i < queue.len() {
            let len = queue[i].req.len();
            if queue[i].net.id == id && (n == 0 || n + len <= max_batch) {
                n += len;
                batch.push(queue.remove(i).expect("index in range"));
            } else {
                i += 1;
            }
        }
        requests.extend(batch.iter_mut().map(|j| std::mem::take(&mut j.req)));
        let t = Instant::now();
        let result = match nets.get_mut(&id) {
            None => Err(EvaluatorError("network no longer served".into())),
            Some(net) => net.evaluate_batch(&mut requests),
        };
        for (j, r) in batch.iter_mut().zip(requests.drain(..)) {
            j.req = r;
        }
        let spent = t.elapsed();
        stats.batches.fetch_add(1, Ordering::Relaxed);
        stats.positions.fetch_add(n as u64, Ordering::Relaxed);
        stats
            .busy_nanos
            .fetch_add(spent.as_nanos() as u64, Ordering::Relaxed);
        for j in batch.drain(..) {
            let answer = match &result {
                Ok(()) => Ok(j.req),
                Err(e) => Err(e.clone()),
            };
            let _ = j.reply.send(answer);
        }
    }
}

/// A stand-in device for benchmarks and tests: answers any batch with uniform outputs after a
/// fixed wait, doing no work, so that a benchmark shows whether the search threads keep up
/// with a device of that latency.
#[derive(Clone, Debug)]
pub struct SimulatedDevice {
    /// The answers (and the sizes they check).
    pub uniform: search::UniformEvaluator,
    /// The wait per batch, whatever its size.
    pub latency: Duration,
}

impl SimulatedDevice {
    /// A device for positions of `input_len` floats and policies of `policy_len`.
    pub fn new(input_len: usize, policy_len: usize, latency: Duration) -> SimulatedDevice {
        SimulatedDevice {
            uniform: search::UniformEvaluator {
                input_len,
                policy_len,
            },
            latency,
        }
    }
}

impl Evaluator for SimulatedDevice {
    fn input_len(&self) -> usize {
        self.uniform.input_len
    }

    fn policy_len(&self) -> usize {
        self.uniform.policy_len
    }

    fn evaluate(
        &mut self,
        inputs: &[f32],
        batch: usize,
    ) -> Result<Vec<Evaluation>, EvaluatorError> {
        std::thread::sleep(self.latency);
        self.uniform.evaluate(inputs, batch)
    }

    fn evaluate_request(&mut self, r: &mut Request) -> Result<(), EvaluatorError> {
        self.evaluate_batch(std::slice::from_mut(r))
    }

    /// One wait for the whole batch, whatever its size.
    fn evaluate_batch(&mut self, requests: &mut [Request]) -> Result<(), EvaluatorError> {
        std::thread::sleep(self.latency);
        for r in requests {
            self.uniform.evaluate_request(r)?;
        }
        Ok(())
    }
}
